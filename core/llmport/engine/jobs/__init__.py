"""Jobs: work a vendor finishes on its side, polled rather than held.

* :mod:`.job`: the shape every job shares (:class:`~.job.Job`,
  :class:`~.job.JobStatus`): status, wait with polling and a timeout,
  cancel, results; and the plan and first request of a job, made as
  ``exec`` makes them, so bad input fails before anything is sent.
* :mod:`.batch`: many requests through a vendor's batch API
  (:class:`~.batch.BatchJob`).
* :mod:`.background`: one run the vendor finishes in the background
  (:class:`~.background.BackgroundJob`).
"""
