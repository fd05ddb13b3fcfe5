"""mpijobs.launch.parse_record finds a rank's JSON record even when mpirun
put another rank's unfinished line before it (seen in CI: UCX error lines
cut mid-word, 'mm_s{"rank":0,"survivors":8}', lost rank 0's record and
failed mpi.uct_revoked_sendrecv_killed). Exit 0 when every case holds."""
import sys

from mpijobs.launch import parse_record

CASES = [
    ('{"rank":0,"survivors":8}', {"rank": 0, "survivors": 8}),
    ('mm_s{"rank":0,"survivors":8}', {"rank": 0, "survivors": 8}),
    ('[vm] {not json} then {"rank":1}', {"rank": 1}),
    ('\0{"rank":2}', {"rank": 2}),
    ("UCX  ERROR shmat(shmid=103940131) failed: Invalid argument", None),
    ('{"rank":0,', None),
    ("[1, 2]", None),
]


def main():
    wrong = [(line, want, parse_record(line)) for line, want in CASES if parse_record(line) != want]
    for line, want, got in wrong:
        print(f"FAIL: {line!r}: expected {want}, got {got}")
    print(f"{len(CASES) - len(wrong)} of {len(CASES)} lines parsed as expected")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
