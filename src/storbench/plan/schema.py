"""Every key a plan file may hold, declared once: where it goes, what it takes, what it does.

The loader's lists of keys (``rules.TOP_KEYS``, ``TARGET_KEYS``, ``HOST_KEYS``,
``RADOS_BENCH_KEYS``, ``RESERVED_KEYS``, ``REPORTS``, ``ENGINES``...) are read from here, so
an unknown key's message and its "did you mean" name exactly these; ``storbench plan keys``
and docs/plan-keys.md print this table. fio's own options are not listed: a workload takes
every option fio 3.33 knows (engines/fio-options.txt), checked by name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Key:
    name: str
    takes: str  # what the value is, in words
    doc: str  # what it does
    values: tuple[str, ...] = ()  # the values it may take, when it is a choice
    default: str = ""  # what holds when it is left out ("" when it must be given or has none)


@dataclass(frozen=True)
class Section:
    where: str  # where in the plan the keys go
    title: str
    keys: tuple[Key, ...]

    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.keys)

    def key(self, name: str) -> Key:
        return next(k for k in self.keys if k.name == name)


PLAN = Section(
    "plan",
    "Top level",
    (
        Key(
            "name",
            "text",
            "The plan's name, shown in `storbench runs` and the reports.",
            default="the file's name",
        ),
        Key(
            "description",
            "text (may span lines: `description: |`)",
            "What the plan measures; shown by `storbench suites` and kept with the run.",
        ),
        Key(
            "targets",
            "list of targets (below)",
            "What every workload runs on; `--target` replaces them from the command line.",
        ),
        Key(
            "hosts",
            "list of hosts (below)",
            "Run every point on these hosts at once, through fio's client/server mode.",
        ),
        Key(
            "workloads",
            "list of workloads (below)",
            "What to run: each a `name` and fio options (or rados bench's keys); a list value "
            "makes that option an axis of the matrix.",
        ),
        Key("global", "fio options", "fio options for every workload (a workload's own win)."),
        Key(
            "repeat",
            "whole number, 1 or more",
            "Run the whole matrix this many times, in rounds; the tables show the mean and spread.",
            default="1",
        ),
        Key(
            "report",
            "choice",
            "Which suite's answer the reports show for the run.",
            values=("qualify", "profiles", "matrix", "rados"),
            default="the summary table only",
        ),
    ),
)

TARGET_KINDS = Section(
    "target",
    "A target (one of these kinds)",
    (
        Key(
            "file",
            "path",
            "A scratch file storbench creates, lays out and removes at the "
            "end; an existing file it did not create is refused.",
        ),
        Key(
            "device",
            "path of a block device",
            "Written only when it holds no partition, filesystem or other signature, unless "
            "`--destroy-data DEVICE` names it; read-only workloads read it.",
        ),
        Key(
            "directory",
            "path of an existing directory",
            "fio creates its files in it (named `storbench.WORKLOAD.N.M`), removed at the end.",
        ),
        Key(
            "rbd",
            "POOL/IMAGE",
            "A Ceph RBD image through fio's rbd engine; created (at "
            "`size`), filled and removed at the end when it does not exist.",
        ),
        Key(
            "rados",
            "POOL",
            "A Ceph pool: objects through fio's rados engine, or `engine: rados-bench` workloads.",
        ),
    ),
)

TARGET_MORE = Section(
    "target",
    "A target's other keys",
    (
        Key(
            "name",
            "text",
            "A label for the tables and reports.",
            default="the path (`rbd:`/`rados:` and the path for Ceph)",
        ),
        Key("size", "size (rbd only)", "The size of the image storbench creates when missing."),
        Key(
            "conf",
            "path (rbd, rados)",
            "The cluster's ceph.conf.",
            default="--ceph-conf, else $CEPH_CONF, else /etc/ceph/ceph.conf",
        ),
        Key(
            "clientname",
            "text (rbd, rados)",
            "The Ceph user, without `client.`.",
            default="Ceph's own (client.admin)",
        ),
    ),
)

HOST = Section(
    "host",
    "A host (`hosts:`)",
    (
        Key(
            "address",
            "IP address or name, or `local`",
            "Where its fio server listens (`storbench agent` there); `local` is this machine: "
            "storbench starts a private fio server on loopback.",
        ),
        Key("port", "TCP port", "The fio server's port.", default="8765"),
        Key("name", "text", "A label for the tables.", default="ADDRESS:PORT, or `local`"),
        Key(
            "targets",
            "list of targets",
            "The host's own targets (each VM's own disk); the plan's `targets:` otherwise.",
        ),
    ),
)

WORKLOAD = Section(
    "workload",
    "A workload's own keys (every other key is a fio option)",
    (
        Key("name", "text", "The workload's name in tables, reports and job files."),
        Key(
            "clients",
            "whole number, or a list (an axis)",
            "fio: run each point on the first N hosts of `hosts:`; rados-bench: N rados bench "
            "processes at once on this machine.",
        ),
        Key(
            "engine",
            "choice",
            "What runs the workload.",
            values=("fio", "rados-bench"),
            default="fio",
        ),
    ),
)

RADOS_BENCH = Section(
    "rados-bench workload",
    "An `engine: rados-bench` workload (rados bench's own options; nothing else)",
    (
        Key("engine", "`rados-bench`", "Run `rados bench` on a `rados:` target."),
        Key(
            "mode",
            "choice",
            "Write objects, then read them in order or at random (the "
            "reads read what a write before them left).",
            values=("write", "seq", "rand"),
        ),
        Key("bs", "size", "The object size of a write (`-b`).", default="4m"),
        Key("threads", "whole number", "Concurrent operations (`-t`).", default="16"),
        Key("runtime", "time", "How long it runs (rados bench's seconds)."),
        Key(
            "clients",
            "whole number, or a list (an axis)",
            "rados bench processes at once, their figures summed over the time all ran.",
            default="1",
        ),
    ),
)

SECTIONS = (PLAN, TARGET_KINDS, TARGET_MORE, HOST, WORKLOAD, RADOS_BENCH)


def keys_markdown() -> str:
    """The documentation of every plan key, as Markdown (docs/plan-keys.md)."""
    out = [
        "# Plan keys",
        "",
        "Every key a storbench plan file may hold (made by `storbench plan keys` from",
        "`src/storbench/plan/schema.py`; a test keeps this file in step). A workload also takes",
        "every fio option, checked by name against fio's own list; `storbench plan check` says",
        "what it refuses and why.",
    ]
    for section in SECTIONS:
        out += [
            "",
            f"## {section.title}",
            "",
            "| key | takes | does | default |",
            "|---|---|---|---|",
        ]
        for k in section.keys:
            takes = k.takes + (": " + ", ".join(f"`{v}`" for v in k.values) if k.values else "")
            cells = [f"`{k.name}`", takes, k.doc, k.default or "-"]
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out) + "\n"
