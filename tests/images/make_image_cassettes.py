"""Write cassettes/images/*.yaml from the vendors' API references (not a test).

    uv run python tests/images/make_image_cassettes.py

No recording of any image endpoint exists (``../shared/wire-samples/README.md``
says so), so these cassettes are **made from documentation, not recorded**:
each request is the body the document shows for the call the test makes (the
tests check the plugins send exactly it: vcrpy matches the JSON body), each
answer the documented success shape with made images (:data:`SCENARIOS` names
the document of each). The PNGs are real (small, one colour); the JPEG of the
Vertex AI case is a stub carrying only JPEG's magic bytes and end marker.
Re-record against the live APIs with ``nox -s record`` when a key is at hand,
then say so in ``cassettes/README.md``.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from image_scenarios import SCENARIOS, Scenario  # noqa: E402
from support.cassette_support import CASSETTES  # noqa: E402

HEADER = "# Made from {doc}, not recorded: tests/images/make_image_cassettes.py\n"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def cassette(scenario: Scenario) -> dict[str, Any]:
    return {
        "interactions": [
            {
                "request": {
                    "body": json.dumps(scenario.request),
                    "headers": {"content-type": ["application/json"]},
                    "method": "POST",
                    "uri": scenario.uri,
                },
                "response": {
                    "body": {"string": json.dumps(scenario.answer())},
                    "headers": {"content-type": ["application/json"]},
                    "status": {"code": 200, "message": "OK"},
                },
            }
        ],
        "version": 1,
    }


def main() -> None:
    folder = CASSETTES / "images"
    folder.mkdir(exist_ok=True)
    for scenario in SCENARIOS.values():
        text = yaml.safe_dump(cassette(scenario), sort_keys=False, width=100)
        (folder / f"{scenario.name}.yaml").write_text(HEADER.format(doc=scenario.doc) + text)


if __name__ == "__main__":
    main()
