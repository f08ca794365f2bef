"""The benchmark suite: mcpbind beside the official SDK, FastMCP and raw floors, in one run, judged on
the targets of issue 18 (bench/targets.py).

    python -m bench [SCENARIO ...] [--quick] [--rounds N] [--cpus free|split|shared] [--output PATH]
    python -m bench --summary-only [--quick]

Scenarios (default: all but ``stdio-shared``, in this order):

* ``stdio``: ``bench/stdio.py``: the ``echo`` server of every SDK over stdio (mcpbind on asyncio and
  trio, the official SDK's low-level server and its ``MCPServer``, FastMCP, and the raw msgspec
  loop): sequential p50/p99, calls/s at 1, 16 and 256 in flight, 100 KB and 1 MB round trips,
  ``tools/list`` of 1,000 tools, idle and peak RSS, start to first answer; placed as ``--cpus``
  says (default ``free``, no pinning: the judged numbers), with mcpbind's plain path
  (``MCPBIND_FASTPATH=0``) as rows of its own in the same rounds (reported, not judged);
* ``stdio-pinned``: the targets' second column: mcpbind, the official low-level server and the
  floor with the generator on one CPU and the server on another, in half the rounds, at 1 and 16
  in flight and ``tools/list`` only;
* ``stdio-shared`` (only when named): the same for mcpbind, the official low-level server and the
  floor with the load generator and the server on one CPU;
* ``client``: ``bench/clients.py``: each SDK's client against the raw floor server, sequential
  and 16 in flight, beside a raw msgspec client (and mcpbind's on its plain path); then, unless
  ``--cpus split``, mcpbind's and the raw client again pinned in half the rounds;
* ``import``: ``bench/imports.py``: a fresh interpreter importing each SDK;
* ``http``: ``bench/streamable_http.py`` (Streamable HTTP under uvicorn, with wrk: 2025-11-25
  sessions, stateless, and 2026-07-28 requests, which need no session), run as it is; its options
  go in ``--http-args "..."`` (``--http-args "--modes modern,stateless"``);
* ``scale``: ``bench/scale.py``: ``mcpbind serve --workers 1`` and ``2`` on a Redis store behind
  nginx (calls/s, 2025-11-25 sessions and 2026-07-28 requests), beside 1 worker on the in-memory
  store, the official SDK and FastMCP behind the same nginx; the latency the Redis store adds;
  Redis memory per session and per task (redis-server and nginx are started by the benchmark);
* ``proxy``: ``bench/proxy.py``: ``mcpbind proxy``, mcp-proxy (PyPI) and supergateway (npm) in
  front of mcpbind's echo server, a stdio server exposed over Streamable HTTP (wrk) and an HTTP
  server exposed over stdio (the stdio load generator), beside the server reached directly: added
  latency and calls/s as ratios (mcp-proxy's venv and supergateway's npm folder are made under
  ``.bench/`` when it runs);
* ``codec``: ``bench/codec.py`` (decode + encode of MCP messages, beside orjson and pydantic).

The official SDK and FastMCP run in virtual environments of their own (``.bench/venvs/``, made on
first use by ``bench/peers.py``); mcpbind runs from this checkout. Every scenario runs even when
one fails; the report says which failed, and the exit status is then 1.

The report (Markdown: the machine, the software, the command, the targets of issue 18 with what
was measured, then each scenario's tables) is printed and written to ``bench/RESULTS.md`` when
every default scenario ran without ``--quick``; otherwise to ``.bench/RESULTS-partial.md``.
``--output`` names another file (``-``: none). The README's table (bench/readme_table.py) and its
chart (bench/chart.py) go to ``bench/SUMMARY.md`` and ``bench/results.png`` after a full run,
their numbers to ``.bench/summary.json``; after any other run to ``.bench/SUMMARY-partial.md``,
``.bench/results-partial.png`` and ``.bench/summary-partial.json``. ``--summary-only`` makes the
table and the chart again from the saved numbers.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

from bench import (
    clients,
    imports,
    peers,
    proxy,
    proxy_report,
    readme_table,
    scale,
    stdio,
    streamable_http,
    targets,
)
from bench._proc import machine_line
from bench.stdio import BenchError
from bench.suite_report import (
    Section,
    collect_targets,
    log,
    make_summary,
    readme_table_paths,
    report,
    write_summary,
)
from bench.targets import http_goals

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = (
    "stdio",
    "stdio-pinned",
    "stdio-shared",
    "client",
    "import",
    "http",
    "http-servers",
    "scale",
    "proxy",
    "codec",
)
# Run when no scenario is named: all but stdio-shared and http-servers (asked for by name).
DEFAULT_SCENARIOS = tuple(s for s in SCENARIOS if s not in ("stdio-shared", "http-servers"))


# -- the scenarios ---------------------------------------------------------------------------------


def stdio_section(
    args: argparse.Namespace, run_args: argparse.Namespace, section: Section, intro: str
) -> dict[str, stdio.Samples]:
    """Run the stdio benchmark with ``run_args`` and add its report to ``section``: the header,
    ``intro``, the tables, the notes (the commit from ``args``) and any failures."""
    started_at = args.commit or stdio.commit()
    results = stdio.run(run_args)
    section.lines += [
        stdio.header_line(run_args.counts, run_args.stdio_rounds, run_args.placement, started_at),
        "",
        intro,
        "",
        *stdio.report_lines(results, run_args.counts),
    ]
    notes = stdio.notes_lines(results, started_at, args.commit)
    if notes:
        section.lines += ["", *notes]
    if stdio.failures(results):
        section.failed = "; ".join(stdio.failures(results))
    return results


def run_stdio(args: argparse.Namespace, section: Section) -> None:
    section.servers = stdio_section(
        args,
        args,
        section,
        "Ratios are of medians: latency ours / theirs (below 1x is better), throughput ours / theirs "
        "(above 1x is better); `official` is the official SDK's low-level server, `floor` the raw "
        "msgspec loop. Big round trips are the median over the rounds of each round's p50. The "
        "`(plain path)` rows are mcpbind with `MCPBIND_FASTPATH=0`, in the same rounds: reported, "
        "not judged.",
    )


PINNED_SERVERS = ("mcpbind-asyncio", "mcpbind-trio", "official", "raw-floor")


def pinned_rounds(rounds: int) -> int:
    """Rounds of a pinned second pass: about half the first's (it is shown, not judged)."""
    return max(1, (rounds + 1) // 2)


def run_stdio_pinned(args: argparse.Namespace, section: Section) -> None:
    """The stdio scenario again, pinned (generator on one CPU, server on another), cheaper: mcpbind,
    the official low-level server and the floor, half the rounds, calls at 1 and 16 in flight and
    tools/list only (no big messages, no start-ups): the targets table's second column."""
    pinned = argparse.Namespace(**vars(args))
    pinned.placement = stdio.Placement.of("split")
    pinned.server_names = [n for n in args.server_names if n in PINNED_SERVERS]
    pinned.starts = 0
    pinned.stdio_rounds = pinned_rounds(args.stdio_rounds)
    pinned.counts = stdio.counts_for(args.quick, [1, 16], big=False, lists=not args.no_list)
    if not pinned.server_names:
        section.lines.append("No server of this scenario was chosen (--stdio-servers).")
        return
    section.servers = stdio_section(
        args,
        pinned,
        section,
        "The targets' second column: the same servers pinned, the load generator on one CPU and the "
        "server on another, in fewer rounds and phases than the unpinned pass (shown, not judged).",
    )


SHARED_SERVERS = ("mcpbind-asyncio", "mcpbind-trio", "official", "raw-floor")


def run_stdio_shared(args: argparse.Namespace, section: Section) -> None:
    """The stdio scenario again with the generator and the server on one CPU, for mcpbind, the
    official low-level server and the floor (start-ups and RSS are not measured again)."""
    shared = argparse.Namespace(**vars(args))
    shared.placement = stdio.Placement.of("shared")
    shared.server_names = [n for n in args.server_names if n in SHARED_SERVERS]
    shared.starts = 0
    if not shared.server_names:
        section.lines.append("No server of this scenario was chosen (--stdio-servers).")
        return
    results = stdio_section(
        args,
        shared,
        section,
        "The same phases with both processes on one CPU: no cross-CPU wake-ups, so the floor's "
        "latency is its work, and pipelined phases cannot run client and server at once. Start-up "
        "is not measured again; RSS is, but its targets are judged in the section above.",
    )
    section.servers = results


def client_pass(args: argparse.Namespace, section: Section, intro: str) -> dict[str, clients.Samples]:
    """One run of the client scenario with ``args``, its tables and notes added to ``section``."""
    results = clients.run(args)
    section.lines += [
        intro,
        "",
        clients.header_line(args.client_counts, args.client_rounds, args.placement),
        "",
        *clients.report_lines(results),
    ]
    notes = [f"- {name}: {n}" for name, s in results.items() for n in dict.fromkeys(s.notes)]
    notes += [f"- {name}: FAILED in {s.failure}" for name, s in results.items() if s.failure is not None]
    if clients.failures(results):
        failed = "; ".join(clients.failures(results))
        section.failed = f"{section.failed}; {failed}" if section.failed else failed
    if notes:
        section.lines += ["", "Notes:", *notes]
    return results


PINNED_CLIENTS = ("raw-client", "mcpbind-asyncio", "mcpbind-trio")


def run_client(args: argparse.Namespace, section: Section) -> None:
    """The clients on ``--cpus``'s placement (judged), then, when that is not already split, mcpbind's
    and the raw client pinned, in half the rounds (the targets' second column)."""
    section.client_runs = client_pass(
        args,
        section,
        "The `(plain path)` rows are mcpbind's client with `MCPBIND_FASTPATH=0`: reported, not judged.",
    )
    if args.cpus == "split":
        return
    pinned = argparse.Namespace(**vars(args))
    pinned.placement = stdio.Placement.of("split")
    pinned.client_names = [n for n in args.client_names if n in PINNED_CLIENTS]
    pinned.client_rounds = pinned_rounds(args.client_rounds)
    if pinned.client_names:
        section.lines.append("")
        section.clients_pinned = client_pass(
            pinned,
            section,
            "Pinned, the client on one CPU and the server on another, in fewer rounds (the targets' "
            "second column, shown, not judged):",
        )


def run_import(args: argparse.Namespace, section: Section) -> None:
    results = imports.run(args)
    section.lines += [
        f"Median of {args.import_runs} runs (min-max), wall time from spawn to exit of "
        '`python -c "import X"`; net: less the bare interpreter of the same environment.',
        "",
        *imports.report_lines(results),
    ]


def subprocess_scenario(command: list[str], section: Section, capture: bool) -> str:
    """Run a benchmark script; its stderr (progress) goes to ours; its stdout is returned when
    ``capture``, else sent to our stderr too. Stopped early (SIGTERM to us, Ctrl-C), it is sent
    SIGTERM and given 30 s to stop its own servers before it is killed."""
    env = stdio.server_env()
    log(f"bench: {shlex.join(command)}")
    with subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE if capture else sys.stderr,
        text=True,
    ) as child:
        try:
            out, _ = child.communicate()
        except BaseException:
            child.terminate()
            try:
                child.wait(30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            raise
    if child.returncode != 0:
        raise BenchError(f"{shlex.join(command)} exited {child.returncode} (its output is above)")
    return out or ""


def run_http(args: argparse.Namespace, section: Section) -> None:
    output = ROOT / ".bench" / "RESULTS-http-suite.md"
    output.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "bench/streamable_http.py", "--output", str(output)]
    command += ["--quick"] if args.quick else []
    command += ["--rounds", str(args.rounds)] if args.rounds is not None else []
    command += ["--commit", args.commit] if args.commit else []
    command += shlex.split(args.http_args)
    if output.exists():
        output.unlink()
    subprocess_scenario(command, section, capture=False)
    text = output.read_text()
    section.lines += [
        f"`bench/streamable_http.py`'s report, as it wrote it (command: `{shlex.join(command[1:])}`); "
        "see the Streamable HTTP section of bench/README.md. Its servers run as users install "
        "them (unless `--http-args` says otherwise): the official SDK's in its venv with what "
        "`pip install mcp` brings, mcpbind and the floor in this interpreter's environment (the "
        "`http` extra's httptools and uvloop), FastMCP's (2026-07-28 modes only) in its venv.",
        "",
    ]
    for line in text.splitlines():
        if line.startswith("# "):
            continue  # its title; this section has one
        section.lines.append("#" + line if line.startswith("### ") else line)
    section.http = http_goals(text)


def run_scale(args: argparse.Namespace, section: Section) -> None:
    try:
        results = scale.run(args)
    except streamable_http.BenchError as exc:  # (bench/streamable_http.py's own class)
        raise BenchError(str(exc)) from exc
    section.lines += [
        "`bench/scale.py` (see the Scale-out section of bench/README.md); the official SDK's server "
        "runs in this interpreter's environment, FastMCP's in its venv.",
        "",
        *scale.lines(args.scale, results),
    ]


def run_proxy(args: argparse.Namespace, section: Section) -> None:
    try:
        results = proxy.run(args)
    except streamable_http.BenchError as exc:  # (wrk missing: bench/streamable_http.py's own class)
        raise BenchError(str(exc)) from exc
    section.lines += [
        "`bench/proxy.py` (see the Proxy section of bench/README.md): `mcpbind proxy`, mcp-proxy (PyPI) "
        "and supergateway (npm) in front of mcpbind's echo server, in both directions, beside the "
        "server reached directly.",
        "",
        *proxy_report.lines(args.proxy, results, args.commit),
    ]
    if proxy.failures(results):
        section.failed = "; ".join(proxy.failures(results))


def run_codec(args: argparse.Namespace, section: Section) -> None:
    command = [sys.executable, "bench/codec.py"]
    command += ["--quick"] if args.quick else []
    command += ["--rounds", str(args.rounds)] if args.rounds is not None else []
    out = subprocess_scenario(command, section, capture=True)
    section.lines += [
        f"`{shlex.join(command[1:])}`: time per decode + encode round trip (see bench/README.md).",
        "",
        *out.strip().splitlines(),
    ]


def run_http_servers(args: argparse.Namespace, section: Section) -> None:
    command = [sys.executable, "bench/http_servers.py"]
    command += ["--quick"] if args.quick else []
    command += ["--rounds", str(args.rounds)] if args.rounds is not None else []
    out = subprocess_scenario(command, section, capture=True)
    section.lines += [
        f"`{shlex.join(command[1:])}`: mcpbind's app under each embedded HTTP server "
        "(see the Embedded HTTP servers section of bench/README.md).",
        "",
        *out.strip().splitlines(),
    ]


RUNNERS: dict[str, tuple[str, Callable[[argparse.Namespace, Section], None]]] = {
    "stdio": ("stdio: servers", run_stdio),
    "stdio-pinned": ("stdio: servers, generator and server pinned to two CPUs", run_stdio_pinned),
    "stdio-shared": ("stdio: servers, generator and server on one CPU", run_stdio_shared),
    "client": ("stdio: clients against the raw floor server", run_client),
    "import": ("Import time", run_import),
    "http": ("Streamable HTTP", run_http),
    "http-servers": ("Embedded HTTP servers for mcpbind's app", run_http_servers),
    "scale": ("Scale-out: workers behind nginx, the Redis store", run_scale),
    "proxy": ("Proxies: a stdio server over HTTP, an HTTP server over stdio", run_proxy),
    "codec": ("Codec: decode + encode of MCP messages", run_codec),
}


# -- main ------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("scenarios", nargs="*", metavar="SCENARIO", help=f"from: {', '.join(SCENARIOS)}")
    parser.add_argument("--quick", action="store_true", help="every scenario's smoke run (a few minutes)")
    parser.add_argument(
        "--rounds", type=int, help="rounds of each scenario (default: each one's own, 5 or 7)"
    )
    parser.add_argument(
        "--cpus",
        choices=["split", "shared", "free"],
        default="free",
        help="stdio and client, the judged pass: no pinning (free, default: the placement a user gets), "
        "load generator (or client) on one CPU and server on another (split), or both on one (shared); "
        "the stdio-pinned scenario and the client's second pass are split whatever this says",
    )
    parser.add_argument(
        "--summary-only",
        action="store_true",
        help="run nothing: make the README table and the chart again from the last full run's numbers "
        "(.bench/summary.json; with --quick, the last other run's, .bench/summary-partial.json)",
    )
    parser.add_argument("--output", help="where the report goes (default: see above; '-' for none)")
    parser.add_argument(
        "--commit",
        help="what to call the code measured in the report (default: this checkout's git commit); for a "
        "run from an export of a commit, which has no .git",
    )
    stdio.add_options(parser, prefix="stdio-")
    clients.add_options(parser, standalone=False)
    imports.add_options(parser, prefix="import-")
    scale.add_options(parser, prefix="scale-")
    proxy.add_options(parser, prefix="proxy-")
    parser.add_argument(
        "--http-args", default="", help="more options for bench/streamable_http.py, as one string"
    )
    args = parser.parse_args(argv)
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenarios {unknown}; choose from {', '.join(SCENARIOS)}")
    args.scenarios = (
        [s for s in SCENARIOS if s in args.scenarios] if args.scenarios else list(DEFAULT_SCENARIOS)
    )
    if args.rounds is not None and args.rounds < 1:
        parser.error("--rounds must be at least 1")
    stdio.check_options(parser, args)
    clients.check_options(parser, args)
    imports.check_options(parser, args)
    scale.check_options(parser, args)
    proxy.check_options(parser, args)
    # A full run (every default scenario, not --quick) writes beside the committed report.
    args.full_paths = set(DEFAULT_SCENARIOS) <= set(args.scenarios) and not args.quick
    if args.output is None:
        full = args.full_paths
        args.output = (
            str(ROOT / "bench" / "RESULTS.md") if full else str(ROOT / ".bench" / "RESULTS-partial.md")
        )
    args.command = shlex.join(["python", "-m", "bench", *(sys.argv[1:] if argv is None else argv)])
    return args


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds: every server and client process is reaped on the way out


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.summary_only:
        numbers = readme_table_paths(args.full_paths)[0]
        try:
            summary = readme_table.decode(numbers.read_bytes())
        except (OSError, ValueError) as exc:
            log(f"bench: cannot read {numbers}: {exc}")
            return 1
        write_summary(summary, args.full_paths, save=False)
        return 0
    signal.signal(signal.SIGTERM, _stop)
    started = datetime.now(timezone.utc)
    commit = args.commit or stdio.commit()
    log(f"bench: {', '.join(args.scenarios)}; {machine_line()}; load average {os.getloadavg()[0]:.2f}")
    try:
        for name in dict.fromkeys(peer for peer in peers.PEERS):
            if name not in proxy.OWN_PEERS or "proxy" in args.scenarios:  # (its own: made when it runs)
                peers.ensure(name)
    except peers.PeerError as exc:
        log(f"bench: cannot make the peers' venvs: {exc}")
        return 1
    sections: list[Section] = []
    for name in args.scenarios:
        title, runner = RUNNERS[name]
        section = Section(name, title)
        sections.append(section)
        t0, load0 = time.monotonic(), os.getloadavg()[0]
        log(f"bench: === {name} === (load average {load0:.2f})")
        try:
            runner(args, section)
        except (BenchError, peers.PeerError, OSError) as exc:
            section.failed = str(exc).strip().splitlines()[0][:500] if str(exc).strip() else repr(exc)
            log(f"bench: {name} failed: {exc}")
        section.seconds = time.monotonic() - t0
        section.load = (load0, os.getloadavg()[0])
        log(f"bench: {name} took {section.seconds / 60:.1f} min")
    ended_at = args.commit or stdio.commit()
    if ended_at != commit:
        commit = f"{commit} at the start, {ended_at} at the end (the checkout changed during the run)"
    text = report(sections, args, started, commit)
    print(text, end="")
    if args.output != "-":
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text)
        log(f"bench: written to {args.output}")
    write_summary(make_summary(sections, args, started, commit), args.full_paths, save=True)
    bad = [s.title for s in sections if s.failed]
    if bad:
        log(f"bench: failed: {', '.join(bad)}")
    missed = targets.missed(collect_targets(sections))
    log(
        f"bench: {len(missed)} targets missed"
        + (": " + "; ".join(f"{t.who} {t.scenario} {t.target}" for t in missed) if missed else "")
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
