"""mpijobs.launch.run takes records from a file its processes append to
(records_file), as a benchmark does whose window its own output would
fall into: whole lines only, a line half written waits for its end; the
file's records count towards expect_records, so a run that lingers after
them ends after its grace, as one that printed them does. Exit 0 when
every check holds."""
import sys
import tempfile
import time
from pathlib import Path

from mpijobs import checks, launch


def main():
    problems = []
    with tempfile.TemporaryDirectory(prefix="records_file.") as tmp:
        path = Path(tmp) / "records.jsonl"
        # rank 1's line is written in two pieces, 0.2 s apart; rank 2 prints
        script = (f"printf '{{\"rank\":0}}\\n' >> {path}; printf '{{\"ran' >> {path}; sleep 0.2; "
                  f"printf 'k\":1}}\\n' >> {path}; echo '{{\"rank\":2}}'; exec sleep 30")
        start = time.monotonic()
        run = launch.run(["sh", "-c", script], deadline_s=20, expect_records=3, grace_s=0.3,
                         describe_overrun=False, records_file=path)
        took = time.monotonic() - start
    ranks = sorted(r.get("rank") for r in run.records)
    if ranks != [0, 1, 2]:
        problems.append(f"records of ranks {ranks}, expected [0, 1, 2] (a half line taken, or one lost)")
    if run.outcome != "hung_after_report":
        problems.append(f"outcome {run.outcome}, expected hung_after_report: the file's records were not counted")
    if took > 10:
        problems.append(f"the run took {took:.1f} s: it was not ended after its grace")
    missing = launch.run(["true"], deadline_s=10, records_file="/nonexistent/records.jsonl")
    if missing.outcome != "exited" or missing.records:
        problems.append(f"a records file never written: {missing.outcome}, {missing.records}")
    return checks.listed_verdict(problems, "records read from the file")


if __name__ == "__main__":
    sys.exit(main())
