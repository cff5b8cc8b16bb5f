"""The neutral types: messages, content blocks, media, stream events and their JSON codec.

What the core and every plugin share, and nothing vendor-specific: the slotted
dataclasses of :mod:`.types`, content loading and checking from the caller's
dicts (:mod:`.content`) and cheap local token estimates (:mod:`.estimate`).
"""
