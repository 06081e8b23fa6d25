#!/usr/bin/env python3
"""longmix: longer LoCoMo-format histories with the same questions.

Usage: longmix.py IN.json OUT.json FACTOR [EVERY]

IN is a LoCoMo-format file of single-persona samples (RealMem's, as
converted by realmem_to_locomo.py). For every EVERY-th sample (default 1),
OUT holds one sample with the same questions and evidence, whose history is
the sample's own sessions interleaved with the sessions of FACTOR-1 samples
of *other* personas (the next ones in the file): their timelines are
stretched onto the sample's own first-to-last session dates, and all
sessions are merged in date order and renumbered, the evidence ids renamed
to follow their turns. So a question is asked of a history about FACTOR
times as long, where what it needs sits exactly where it sat before, among
unrelated sessions of the same kind. Recall on OUT against recall on the
same samples alone measures what length alone costs.

Written before any tuning against it, and never used to choose a
parameter: it is a yardstick, not a training set.
"""
import json
import sys
from datetime import datetime


def persona(sample_id):
    # realmem-<Name>-c50 -> <Name>
    return sample_id.rsplit("-", 1)[0]


def parse_date(s):
    return datetime.strptime(s.strip(), "%I:%M %p on %d %B, %Y")


def fmt_date(d):
    return d.strftime("%I:%M %p on %d %B, %Y").lstrip("0").replace("AM", "am").replace("PM", "pm")


def sessions(sample):
    c = sample["conversation"]
    out = []
    n = 1
    while True:
        key = f"session_{n}"
        if key not in c and f"{key}_date_time" not in c:
            break
        if isinstance(c.get(key), list) and c[key]:
            out.append((n, parse_date(c[f"{key}_date_time"]), c[key]))
        n += 1
    return out


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    src, dst, factor = sys.argv[1], sys.argv[2], int(sys.argv[3])
    every = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    data = json.load(open(src))
    out = []
    for i in range(0, len(data), every):
        s = data[i]
        own = sessions(s)
        t0, t1 = own[0][1], own[-1][1]
        span = (t1 - t0) or (own[-1][1] - own[0][1])
        merged = [(d, 0, n, turns) for n, d, turns in own]
        others, seen = [], {persona(s["sample_id"])}
        j = i
        while len(others) < factor - 1:
            j = (j + 1) % len(data)
            if j == i:
                sys.exit(f"{src}: fewer than {factor} personas")
            p = persona(data[j]["sample_id"])
            if p in seen:
                continue
            seen.add(p)
            others.append(data[j])
        for k, o in enumerate(others, start=1):
            os_ = sessions(o)
            a, b = os_[0][1], os_[-1][1]
            for n, d, turns in os_:
                f = (d - a) / (b - a) if b > a else 0.5
                merged.append((t0 + f * span, k, n, turns))
        merged.sort(key=lambda x: (x[0], x[1], x[2]))
        conv = {"speaker_a": s["conversation"]["speaker_a"], "speaker_b": s["conversation"]["speaker_b"]}
        rename = {}
        for new, (d, k, n, turns) in enumerate(merged, start=1):
            conv[f"session_{new}_date_time"] = fmt_date(d)
            conv[f"session_{new}"] = []
            for ti, t in enumerate(turns, start=1):
                nt = dict(t)
                nt["dia_id"] = f"D{new}:{ti}"
                if k == 0:
                    rename[t["dia_id"]] = nt["dia_id"]
                conv[f"session_{new}"].append(nt)
        qa = []
        for q in s["qa"]:
            nq = dict(q)
            nq["evidence"] = [rename.get(e, e + "-missing") for e in q["evidence"]]
            qa.append(nq)
        out.append({"sample_id": f"{s['sample_id']}-x{factor}", "conversation": conv, "qa": qa})
    json.dump(out, open(dst, "w"))


if __name__ == "__main__":
    main()
