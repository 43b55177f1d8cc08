"""One look and one meaning for every command's flags, applied to the whole command tree.

Every command, whoever adds it, gets from :func:`build`:

- **plain help** that wraps to the terminal and never exceeds 80 columns (no rich panels that
  cut option names with "…"), with metavars that say what a value is (``FILE``, ``URL``, ``N``,
  ``[text|json]``) instead of type labels such as ``<str>`` or ``<bool>``;
- **one meaning per flag**: ``-o/--output`` is a file or directory that is written,
  ``--output-format`` is what is written (text, json, github, ...), ``--format/-f`` is the CDC
  format of the input messages (a name from ``cdc-contracts formats``);
- **old spellings** that still work, each with a deprecation note on stderr (:data:`RENAMED`).

A new flag needs nothing from here: give it a ``metavar=`` when its option name does not say
what the value is (the default is the name, as argparse does: ``--topic TOPIC``).
"""

from __future__ import annotations

import enum
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

#: Old spellings of flags, per command path: old -> new. Rewritten before parsing, with a note.
RENAMED: Final[dict[str, dict[str, str]]] = {
    "infer": {"--out": "--output"},
    "normalize": {"--out": "--output"},
    "registry pull": {"--out": "--output"},
    "validate": {"--output": "--output-format"},
    "formats": {"--output": "--output-format"},
    "registry plan": {"--output": "--output-format"},
    "registry push": {"--output": "--output-format"},
    "spark decode": {"--output-mode": "--output-format"},
}
OUTPUT_FLAGS: Final = ("-o", "--output")
OUTPUT_FORMAT_FLAG: Final = "--output-format"
#: help never wider than this, whatever the terminal
MAX_HELP_WIDTH: Final = 80


def build(group: Any) -> Any:
    """Give every command of the click tree under ``group`` the plain 80-column help."""
    for command in walk(group):
        command.format_help = types.MethodType(format_help, command)
        if hasattr(command, "rich_markup_mode"):
            command.rich_markup_mode = None
        ctx_settings = dict(command.context_settings or {})
        ctx_settings.setdefault("max_content_width", MAX_HELP_WIDTH)
        command.context_settings = ctx_settings
    return group


def walk(command: Any, path: tuple[str, ...] = ()) -> Iterator[Any]:
    """The command and every subcommand under it, depth first (hidden ones included)."""
    yield command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from walk(sub, (*path, name))


def command_paths(group: Any) -> list[tuple[str, ...]]:
    """The argument path of every command under ``group`` (``()`` is the root)."""
    found: list[tuple[str, ...]] = []

    def visit(command: Any, path: tuple[str, ...]) -> None:
        found.append(path)
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            if not getattr(sub, "hidden", False):
                visit(sub, (*path, name))

    visit(group, ())
    return found


# --- help ------------------------------------------------------------------------------------


def format_help(self: Any, ctx: Any, formatter: Any) -> None:
    """Usage, help text, arguments, options and subcommands as plain text (click's layout,
    wrapped without breaking words at hyphens, so ``--read-requires-key`` stays whole)."""
    width = formatter.width
    formatter.write_usage(ctx.command_path, " ".join(_usage_pieces(self, ctx)))
    text = (self.help or "").split("\f")[0]
    for paragraph in _paragraphs(text):
        formatter.write("\n")
        formatter.write(_wrap(paragraph, width, "  ", "  "))
    arguments = [_argument_row(p) for p in self.get_params(ctx) if _is_argument(p)]
    options = [_option_row(p) for p in self.get_params(ctx) if _shown_option(p)]
    commands = [
        (name, _first_sentence(sub))
        for name, sub in sorted(getattr(self, "commands", {}).items())
        if not getattr(sub, "hidden", False)
    ]
    for title, rows in (("Arguments", arguments), ("Options", options), ("Commands", commands)):
        if rows:
            formatter.write(f"\n{title}:\n")
            formatter.write(_definitions(rows, width))


#: the widest first column; longer names put their help on the next line
NAME_COLUMN: Final = 30


def _definitions(rows: Sequence[tuple[str, str]], width: int) -> str:
    """Two columns: names indented by 2, help aligned after the widest name (up to 30)."""
    first = min(max(len(name) for name, _ in rows), NAME_COLUMN) + 4
    lines: list[str] = []
    for name, text in rows:
        lead = f"  {name}"
        if not text:
            lines.append(lead + "\n")
        elif len(lead) + 2 <= first:
            lines.append(_wrap(text, width, lead.ljust(first), " " * first))
        else:
            lines.append(lead + "\n" + _wrap(text, width, " " * first, " " * first))
    return "".join(lines)


def _wrap(text: str, width: int, first: str, rest: str) -> str:
    import textwrap

    return (
        textwrap.fill(
            text,
            width=max(width, len(first) + 20),
            initial_indent=first,
            subsequent_indent=rest,
            break_on_hyphens=False,
            break_long_words=False,
        )
        + "\n"
    )


def _first_sentence(command: Any) -> str:
    """A subcommand's summary: its short help, else its help's first sentence."""
    if getattr(command, "short_help", None):
        return str(command.short_help)
    paragraphs = _paragraphs((command.help or "").split("\f")[0])
    if not paragraphs:
        return ""
    first = paragraphs[0]
    for end in (". ", "; "):
        if end in first:
            return first.split(end, 1)[0] + "."
    return first


def _paragraphs(text: str) -> list[str]:
    import inspect

    return [" ".join(p.split()) for p in inspect.cleandoc(text).split("\n\n") if p.strip()]


def _is_argument(param: Any) -> bool:
    return bool(param.param_type_name == "argument")


def _shown_option(param: Any) -> bool:
    return bool(param.param_type_name == "option" and not getattr(param, "hidden", False))


def _usage_pieces(command: Any, ctx: Any) -> list[str]:
    pieces = ["[OPTIONS]"] if any(_shown_option(p) for p in command.get_params(ctx)) else []
    for param in command.get_params(ctx):
        if _is_argument(param):
            name = argument_name(param) + ("..." if param.nargs != 1 else "")
            pieces.append(name if param.required else f"[{name}]")
    if getattr(command, "commands", None):
        pieces.append("COMMAND [ARGS]...")
    return pieces


def argument_name(param: Any) -> str:
    return str(param.metavar or param.name.upper())


#: choices longer than this are listed in the help text, not in the option's column
LISTED_CHOICES: Final = 40


def metavar(param: Any) -> str:
    """What an option's value is: its ``metavar``, its choices (when short), or its name in
    capitals."""
    if param.metavar:
        return str(param.metavar)
    choices = "|".join(choices_of(param))
    if choices and len(choices) <= LISTED_CHOICES:
        return f"[{choices}]"
    long = [o for o in param.opts if o.startswith("--")]
    name: str = long[0][2:] if long else param.name
    return name.upper().replace("-", "_")


def choices_of(param: Any) -> list[str]:
    for holder in (getattr(param, "type", None), getattr(param, "type_descriptor", None)):
        found = getattr(holder, "choices", None)
        if found:
            return [str(c.value if isinstance(c, enum.Enum) else c) for c in found]
    return []


def _is_flag(param: Any) -> bool:
    return bool(getattr(param, "is_flag", False) or getattr(param, "count", False))


def _argument_row(param: Any) -> tuple[str, str]:
    extra = [] if param.required else _default(param)
    return argument_name(param), _with_extra(getattr(param, "help", None) or "", extra)


def _option_row(param: Any) -> tuple[str, str]:
    shorts = [o for o in param.opts if not o.startswith("--")]
    longs = [o for o in param.opts if o.startswith("--")]
    names = ", ".join([*shorts, *longs])
    if param.secondary_opts:
        names += " / " + ", ".join(param.secondary_opts)
    if not _is_flag(param):
        names += " " + metavar(param) + ("..." if param.nargs != 1 else "")
    extra = _default(param)
    choices = choices_of(param)
    if not param.metavar and len("|".join(choices)) > LISTED_CHOICES:
        extra.insert(0, "one of: " + ", ".join(choices))
    envvar = param.envvar
    if envvar:
        shown = envvar if isinstance(envvar, str) else ", ".join(envvar)
        extra.append(f"env: {shown}")
    bounds = _bounds(param)
    if bounds:
        extra.append(bounds)
    if param.required:
        extra.append("required")
    if getattr(param, "multiple", False):
        extra.append("repeatable")
    return names, _with_extra(param.help or "", extra)


def _with_extra(text: str, extra: Sequence[str]) -> str:
    text = " ".join(text.split())
    if not extra:
        return text
    return f"{text}  [{'; '.join(extra)}]" if text else f"[{'; '.join(extra)}]"


def _default(param: Any) -> list[str]:
    value = param.default
    if getattr(param, "show_default", None) is False:
        return []
    if callable(value) or value is None or value in ((), [], ""):
        return []
    if isinstance(value, bool):
        if not value or not _is_flag(param):
            return []
        return [f"default: {param.opts[-1]}"]
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, (list, tuple)):
        value = ", ".join(str(v.value if isinstance(v, enum.Enum) else v) for v in value)
    return [f"default: {value}"]


def _bounds(param: Any) -> str:
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    if low is None and high is None:
        return ""
    if low is not None and high is not None:
        return f"{low} to {high}"
    return f"at least {low}" if low is not None else f"at most {high}"


# --- old spellings ---------------------------------------------------------------------------


def rewrite_argv(
    group: Any, argv: Sequence[str], note: Callable[[str], None] | None = None
) -> list[str]:
    """``argv`` with old flag spellings replaced by today's, a note on stderr for each.

    Two kinds: a renamed flag (:data:`RENAMED`), and ``-o/--output NAME`` on a command that
    also has ``--output-format`` where NAME is one of its formats: ``--output json`` used to
    choose what is written, so it still does (a file named json is written as ``./json``).
    """
    say = note or (lambda line: sys.stderr.write(line + "\n"))
    args = list(argv)
    command, path, start = _resolve(group, args)
    if command is None:
        return args
    renamed = RENAMED.get(" ".join(path), {})
    formats = _output_formats(command)
    takes_value = _value_flags(command) | {o for o, n in renamed.items() if n in _flags(command)}
    out: list[str] = args[:start]
    i = start
    while i < len(args):
        token = args[i]
        if token == "--":
            out += args[i:]
            break
        flag, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        if flag not in takes_value and token[:2] in takes_value and not token.startswith("--"):
            flag, inline, eq = token[:2], token[2:], "="  # -ojson
        new = renamed.get(flag)
        value = inline if eq else (args[i + 1] if i + 1 < len(args) else None)
        if new is None and flag in OUTPUT_FLAGS and value in formats:
            new = OUTPUT_FORMAT_FLAG
            say(
                f"note: {flag} {value} is the old spelling of {OUTPUT_FORMAT_FLAG} {value}: "
                f"{flag} names a file now (for a file named {value}, write ./{value})"
            )
        elif new is not None:
            say(f"note: {flag} is deprecated: use {new}")
        if new is not None:
            out.append(f"{new}={inline}" if eq else new)
        else:
            out.append(token)
        if flag in takes_value and not eq and i + 1 < len(args):
            out.append(args[i + 1])
            i += 1
        i += 1
    return out


def _resolve(group: Any, args: list[str]) -> tuple[Any, tuple[str, ...], int]:
    """The command ``args`` name, its path and the index after its name."""
    command, i = group, 0
    path: tuple[str, ...] = ()
    while getattr(command, "commands", None):
        while i < len(args) and args[i].startswith("-"):
            i += 1  # the root's options take no values (--version, --help)
        if i >= len(args) or args[i] not in command.commands:
            return None, path, i
        command = command.commands[args[i]]
        path = (*path, args[i])
        i += 1
    return command, path, i


def _flags(command: Any) -> set[str]:
    return {o for p in command.params for o in [*p.opts, *getattr(p, "secondary_opts", [])]}


def _value_flags(command: Any) -> set[str]:
    return {
        o
        for p in command.params
        if p.param_type_name == "option" and not _is_flag(p)
        for o in p.opts
    }


def _output_formats(command: Any) -> set[str]:
    for param in command.params:
        if OUTPUT_FORMAT_FLAG in param.opts:
            return set(choices_of(param))
    return set()
