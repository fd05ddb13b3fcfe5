"""Shows which path carried the heartbeats, as a pass/fail test.

  put_path.py --detector-transport btl --btl sm|tcp|uct[:domains]|ofi[:provider] [--am]
  put_path.py --detector-transport ucx [--btl ...] [--am] [--nodes N]

Runs a failure-free job with the detector at η = 10 ms and reads each
rank's finalize report (mpi_ft_verbose 5).

Over the application's BTLs (restricted to `--btl`, mpicmd.transport_mca):
  btl_ft: heartbeats: N by BTL put (M completed), K by active message (B before the
  observer's flag handle came); W new words ...
With puts (the default) every rank must have put through BTL, had its puts
complete, read new words from its own flag, and sent heartbeats as messages
only before its observer's flag handle came (B == K; how long that takes
depends on how far apart the ranks start, which a loaded host stretches).

Over the detector's own UCX context:
  btl_ft: heartbeats over ucx: S stored into a mapped flag, P sent to the heartbeat
  worker (C completed, ...), K by active message (U of them to an observer found
  unreachable); R received on the heartbeat worker; W new words read from the local
  flag; ...
A heartbeat to an observer found unreachable (it left in MPI_Finalize, and
UCX reported its endpoint failed, or its flag file was already gone when
the emitter looked for it) has no path left; every other one must take the
one-sided path (K == U).
On one host every observer is a node-mate: every heartbeat must be stored
into its mapped flag (no call into UCX), none sent, none a message. With
--nodes N (emulated nodes, tests/netns) each rank's observer is on another
node (ring order `node`): its heartbeats must go to the observer's
heartbeat worker and complete, none as a message of the core: the
addresses came with the modex, so there is no "before the handle".

With --hierarchy node (two levels) across N nodes, node-mates observe each
other: a rank stores into its observer's flag, except one rank a node,
whose observer is the first rank of the next node and which sends; so
exactly N ranks send most of their heartbeats, and none goes as a message.

With --am (mpi_ft_detector_rdma_heartbeat false) no store or send may happen.
"""
import argparse
import re
import sys
from mpijobs import launch, mpicmd


UCX_REPORT = re.compile(r"btl_ft: heartbeats over ucx: (\d+) stored into a mapped flag, (\d+) sent to "
                        r"the heartbeat worker \((\d+) completed, \d+ skipped while words were in "
                        r"flight\), (\d+) by active message \((\d+) of them to an observer found "
                        r"unreachable\); \d+ received on the heartbeat worker; (\d+) new words read")
REPORT = re.compile(r"btl_ft: heartbeats: (\d+) by (\S+) put \((\d+) completed\), (\d+) by active "
                    r"message \((\d+) before the observer's flag handle came\); (\d+) new words read")
NP = 4


def btl_problems(args, output):
    reports = [tuple(int(g) if g.isdigit() else g for g in m.groups()) for m in REPORT.finditer(output)]
    problems = []
    if len(reports) != NP:
        problems.append(f"{len(reports)} of {NP} ranks reported their heartbeat counters")
    for put, btl, completed, messages, before_handle, words in reports:
        print(f"  put {put} by {btl}, completed {completed}, as messages {messages} "
              f"({before_handle} before the handle), flag words read {words}")
        if args.am:
            if put or messages == 0:
                problems.append("with RDMA heartbeats off, expected messages only")
        elif btl != args.btl.partition(":")[0] or put == 0 or completed == 0 or words == 0:
            problems.append(f"expected heartbeats by {args.btl} put, got {put} by {btl}, {messages} as messages")
        elif messages != before_handle:
            problems.append(f"{messages - before_handle} heartbeats went as messages after the observer's "
                            f"flag handle came (a put failed or had no path)")
    return problems


def ucx_problems(args, output):
    reports = [tuple(int(g) for g in m.groups()) for m in UCX_REPORT.finditer(output)]
    problems = []
    if len(reports) != NP:
        problems.append(f"{len(reports)} of {NP} ranks reported their heartbeat counters")
    for stored, put, completed, all_messages, to_unreachable, words in reports:
        messages = all_messages - to_unreachable
        print(f"  stored {stored}, sent to the heartbeat worker {put} (completed {completed}), as messages "
              f"{all_messages} ({to_unreachable} to an unreachable observer), flag words read {words}")
        if args.am:
            if stored or put or messages == 0:
                problems.append("with RDMA heartbeats off, expected messages only")
        elif messages:
            problems.append(f"{messages} heartbeats went as messages where a one-sided path exists")
        elif args.nodes == 1 and (stored == 0 or put):
            problems.append(f"on one host expected every heartbeat stored into the observer's mapped "
                            f"flag, got {stored} stored and {put} sent")
        elif args.hierarchy == "node":
            if stored + put == 0 or (put and not completed):
                problems.append(f"expected heartbeats stored or sent and completed, got {stored} stored "
                                f"and {put} sent ({completed} completed)")
        elif args.nodes > 1 and (put == 0 or completed == 0):
            # (a store is allowed: a rank whose observer left in MPI_Finalize
            # may end up observed by a node-mate)
            problems.append(f"across nodes expected heartbeats sent to the heartbeat worker, got "
                            f"{put} sent ({completed} completed)")
        if not args.am and words == 0:
            problems.append("a rank read no new word from its own flag")
    senders = sum(1 for stored, put, *_ in reports if put > stored)
    if args.hierarchy == "node" and not args.am and senders != args.nodes:
        problems.append(f"two levels: {senders} ranks sent most of their heartbeats across nodes, "
                        f"expected one a node ({args.nodes})")
    return problems


def command(args, exe, mca):
    program = [exe, "--kind", "none", "--inject-after-ms", 1500]
    if args.nodes == 1:
        return mpicmd.mpirun(NP, program, mca=mca)
    from mpijobs import nodes
    return nodes.mpirun_command_netns(NP, program, mca=mca, nodes=args.nodes)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--detector-transport", choices=["ucx", "btl"], required=True)
    p.add_argument("--btl", type=mpicmd.transport_arg, default=None,
                   help="the application's transport: sm, tcp, uct[:domains], ofi[:provider]")
    p.add_argument("--am", action="store_true", help="RDMA heartbeats off: expect messages only")
    p.add_argument("--nodes", type=int, default=1, help="emulated nodes (tests/netns; ucx only)")
    p.add_argument("--hierarchy", choices=["flat", "node"], default="flat",
                   help="mpi_ft_detector_hierarchy (default flat)")
    args = p.parse_args()
    if args.detector_transport == "btl" and (args.btl is None or args.nodes != 1):
        p.error("--detector-transport btl needs --btl and one host")
    exe = mpicmd.compile_test("tests/mpi/ulfm_agree.c")
    mca = {**(mpicmd.transport_mca(args.btl) if args.btl else {}), "mpi_ft_verbose": 5,
           "mpi_ft_detector_period": 0.01, "mpi_ft_detector_timeout": 0.2,
           "mpi_ft_detector_transport": args.detector_transport, "mpi_ft_detector_hierarchy": args.hierarchy,
           "mpi_ft_detector_rdma_heartbeat": "false" if args.am else "true"}
    if args.nodes > 1:
        from mpijobs import nodes
        with nodes.taken_for_a_test(args.nodes) as names:
            if names is None:
                return 77
            run = launch.run(command(args, exe, mca), deadline_s=60)
    else:
        run = launch.run(command(args, exe, mca), deadline_s=60)
    problems = [f"mpirun exit status {run.returncode}"] if run.returncode != 0 else []
    problems += (ucx_problems if args.detector_transport == "ucx" else btl_problems)(args, run.output)
    if problems:
        print("FAILED:\n  " + "\n  ".join(problems) + "\n--- output ---\n" + run.output[-3000:])
        return 1
    print(f"ok: heartbeats over {args.detector_transport} {args.btl or ''} "
          f"{'as active messages' if args.am else 'one-sided'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
