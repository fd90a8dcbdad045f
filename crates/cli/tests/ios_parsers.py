"""Parses `lagkit switch show ...` text with the tools that automate IOS.

Usage: python ios_parsers.py OUTPUTS.json

OUTPUTS.json maps each command (`show lacp neighbor`) to the text the
switch printed. Prints one JSON object: for each command, what Cisco's
pyATS/Genie parsers (os `ios`, then `iosxe` where `ios` has none) and
ntc-templates (platform `cisco_ios`) made of it:

  {"show lacp neighbor": {"genie": {...} | null, "genie_parser": "...",
                          "genie_error": "...", "ntc": [...] | null,
                          "ntc_error": "..."}, ...}

`null` with no error: that tool has no parser for the command. An error:
it has one and it failed on the text (a schema that wants a column the
text lacks, a line the template does not take). Run with the venv that
`scripts/setup.sh parsers` makes; crates/cli/tests/ios_parsers.rs calls it.
"""

import json
import sys
import traceback


def genie_device(os_name):
    from genie.conf.base import Device

    d = Device("lagkit", os=os_name)
    d.custom = {"abstraction": {"order": ["os"]}}
    return d


def genie(cmd, text):
    from genie.libs.parser.utils.common import ParserNotFound

    out = {"genie": None}
    # `show interfaces counters`: IOS-XE's parser of that exact command
    # reads one table only (the second overwrites the first); the parser of
    # `show interfaces X counters` reads both, In and Out.
    if cmd == "show interfaces counters":
        from genie.libs.parser.iosxe.show_interface import ShowInterfacesCounters

        try:
            p = ShowInterfacesCounters(device=genie_device("iosxe"))
            out["genie"] = p.parse(interface="all", output=text)
            out["genie_parser"] = "iosxe ShowInterfacesCounters"
        except Exception as e:  # noqa: BLE001 - reported, not hidden
            out["genie_error"] = f"{type(e).__name__}: {e}"
        return out
    for os_name in ("ios", "iosxe"):
        d = genie_device(os_name)
        try:
            out["genie"] = d.parse(cmd, output=text)
            from genie.libs.parser.utils import get_parser

            cls, _ = get_parser(cmd, d)
            out["genie_parser"] = f"{os_name} {cls.__name__}"
            return out
        except ParserNotFound:
            continue
        except Exception as e:  # noqa: BLE001
            out["genie_error"] = f"{os_name}: {type(e).__name__}: {e}"
            return out
    return out


def ntc(cmd, text):
    from ntc_templates.parse import parse_output

    try:
        rows = parse_output(platform="cisco_ios", command=cmd, data=text)
        return {"ntc": rows}
    except Exception as e:  # noqa: BLE001
        msg = str(e)
        if "No template" in msg or "no matching" in msg.lower():
            return {"ntc": None}
        return {"ntc": None, "ntc_error": f"{type(e).__name__}: {msg}"}


def main():
    with open(sys.argv[1]) as f:
        outputs = json.load(f)
    result = {}
    for cmd, text in outputs.items():
        r = {}
        try:
            r.update(genie(cmd, text))
        except Exception:  # noqa: BLE001
            r["genie_error"] = traceback.format_exc(limit=2)
        r.update(ntc(cmd, text))
        result[cmd] = r
    json.dump(result, sys.stdout, indent=1, sort_keys=True, default=str)


if __name__ == "__main__":
    main()
