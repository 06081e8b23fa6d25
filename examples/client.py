"""Call a strata server from Python with the standard library alone.

    python3 client.py http://127.0.0.1:7700 [TOKEN]

Appends two turns to the conversation "trip" (again: they are skipped by
their ext_ids), asks for a context package about the hotel, and prints it.
"""
import json
import sys
import urllib.error
import urllib.request

if len(sys.argv) < 2:
    sys.exit("usage: python3 client.py URL [TOKEN]")
base = sys.argv[1].rstrip("/")
token = sys.argv[2] if len(sys.argv) > 2 else ""


def call(method, path, body=None):
    """Send a request; end the program with a message on any error."""
    where = f"{method} {base}{path}"
    try:
        req = urllib.request.Request(base + path, method=method)
    except ValueError as e:
        sys.exit(f"{where}: {e}")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    data = None
    if body is not None:
        data = json.dumps(body).encode("utf-8")
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, data, timeout=60) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    except (urllib.error.URLError, OSError) as e:
        sys.exit(f"{where}: cannot reach the server: {getattr(e, 'reason', e)}")
    try:
        answer = json.loads(raw)
    except ValueError:
        sys.exit(f"{where}: {status}, and the answer is not JSON: {raw[:200]!r}")
    if status >= 400:
        detail = answer.get("detail") if isinstance(answer, dict) else None
        sys.exit(f"{where}: {status} {detail or raw[:200]!r}")
    return answer


turns = [
    {"ext_id": "m1", "role": "user", "name": "Ana", "time": "2025-06-01T09:00:00Z",
     "content": "We land in Lisbon on 14 June; book the hotel near Alfama."},
    {"ext_id": "m2", "role": "assistant", "time": "2025-06-01T09:01:00Z",
     "content": "Booked Casa Alfama for 14-18 June, confirmation LX-4471."},
]
for _ in range(2):
    res = call("POST", "/v1/conversations/trip/turns", {"turns": turns})
    print(f"added {res['added']}, already present {res['skipped']}")
pkg = call("POST", "/v1/conversations/trip/context", {"query": "hotel confirmation", "budget": 300})
print(f"{pkg['tokens']} of {pkg['budget']} tokens")
print(pkg["rendered"])
