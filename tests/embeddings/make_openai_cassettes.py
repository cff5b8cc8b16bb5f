"""Write the OpenAI embedding cassettes from the recorded wire samples (fourth batch).

``uv run python tests/embeddings/make_openai_cassettes.py``

Each cassette keeps the sample's request exactly (method, URI, JSON body) and
its answer's shape: the same ``data[]`` items (``object``, ``index``), model,
``usage``, and base64 vectors of the recorded length. The samples store each
vector truncated, so the values are made here: deterministic, finite float32
(row ``i``, value ``j`` is ``sin(i * 7919 + j) / 20``), which lets a test check
every value that comes back.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT.parent / "shared" / "wire-samples" / "openai-embeddings"
CASSETTES = ROOT / "cassettes" / "openai"

#: sample file -> (cassette, values per vector as recorded: base64 chars * 3 / 4 / 4)
MADE = {
    "embed-documents.json": ("embed_documents.yaml", 1536),
    "embed-dimensions.json": ("embed_dimensions.yaml", 128),
}


def value(row: int, column: int) -> float:
    """The float32 value at ``row``, ``column`` of a made vector."""
    return struct.unpack("<f", struct.pack("<f", math.sin(row * 7919 + column) / 20))[0]


def vector_b64(row: int, dims: int) -> str:
    return base64.b64encode(
        struct.pack(f"<{dims}f", *(value(row, j) for j in range(dims)))
    ).decode()


def cassette(sample: dict[str, Any], dims: int) -> dict[str, Any]:
    (interaction,) = sample["interactions"]
    request, response = interaction["request"], interaction["response"]
    body = response["body"]
    data = [
        {
            "object": item["object"],
            "index": item["index"],
            "embedding": vector_b64(item["index"], dims),
        }
        for item in body["data"]
    ]
    answer = {
        "object": body["object"],
        "data": data,
        "model": body["model"],
        "usage": body["usage"],
    }
    return {
        "interactions": [
            {
                "request": {
                    "body": json.dumps(request["body"], separators=(",", ":")),
                    "headers": {
                        "accept": ["application/json"],
                        "content-type": ["application/json"],
                    },
                    "method": request["method"],
                    "uri": request["uri"],
                },
                "response": {
                    "body": {"string": json.dumps(answer)},
                    "headers": {"content-type": [response["headers"]["content-type"]]},
                    "status": {"code": response["status"], "message": "OK"},
                },
            }
        ],
        "version": 1,
    }


def main() -> None:
    for sample_name, (name, dims) in MADE.items():
        sample = json.loads((SAMPLES / sample_name).read_text())
        (CASSETTES / name).write_text(yaml.safe_dump(cassette(sample, dims), sort_keys=True))
        print("wrote", CASSETTES / name)


if __name__ == "__main__":
    main()
