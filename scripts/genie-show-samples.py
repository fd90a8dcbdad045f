"""Parses each command output of lagkit's show samples with Cisco's Genie
parsers, to be sure the hand-written samples are laid out as IOS lays them
out (Genie returns nothing for a table it cannot read).

Needs a Python with Genie (`pip install pyats.contrib genie`):
  python scripts/genie-show-samples.py examples/check/show-*.txt crates/check/tests/show/*.txt
"""
import re, sys, json
from unittest.mock import Mock
from genie.libs.parser.iosxe.show_lag import (ShowEtherchannelSummary, ShowLacpNeighbor,
    ShowLacpNeighborDetail, ShowEtherChannelDetail, ShowPagpNeighbor, ShowLacpInternal,
    ShowLacpCounters, ShowLacpSysId)
from genie.libs.parser.iosxe.show_interface import ShowInterfacesStatus
from genie.libs.parser.iosxe.show_interface_counters import ShowInterfacesCountersPort

P = {
 'etherchannel summary': ShowEtherchannelSummary, 'etherchannel summ': ShowEtherchannelSummary,
 'lacp neighbor': ShowLacpNeighbor, 'lacp nei': ShowLacpNeighbor,
 'lacp neighbor detail': ShowLacpNeighborDetail, 'lacp nei det': ShowLacpNeighborDetail,
 'etherchannel 10 detail': ShowEtherChannelDetail,
 'pagp neighbor': ShowPagpNeighbor, 'pagp nei': ShowPagpNeighbor,
 'lacp internal': ShowLacpInternal, 'lacp counters': ShowLacpCounters,
 'lacp sys-id': ShowLacpSysId, 'lacp count': ShowLacpCounters,
 'interfaces status': ShowInterfacesStatus, 'int status': ShowInterfacesStatus,
 'interfaces counters': ShowInterfacesCountersPort, 'int counters': ShowInterfacesCountersPort,
}
def sections(text):
    cur = None
    for l in text.replace('\r\n', '\n').split('\n'):
        if '--More--' in l: l = l.split('\x08')[-1]
        m = re.match(r'^[\w.-]+#\s*(?:sh|show)\s+(.*?)\s*(\|.*)?$', l)
        if m or re.match(r'^[\w.-]+#', l):
            if cur: yield cur
            cur = [m.group(1), []] if m else None
        elif cur:
            cur[1].append(l)
    if cur: yield cur
ok = True
for f in sys.argv[1:]:
    for cmd, lines in sections(open(f, newline='').read()):
        cls = P.get(cmd, 'unknown')
        if cls == 'unknown' or cls is None:
            print(f"{f}: {cmd}: not validated"); continue
        out = '\n'.join(lines)
        r = cls(device=Mock()).cli(output=out) if cls is not ShowEtherChannelDetail else cls(device=Mock()).cli(channel_group='10', output=out)
        print(f"{f}: show {cmd}: {json.dumps(r, sort_keys=True)[:600]}")
        if not r: ok = False; print("  EMPTY PARSE")
sys.exit(0 if ok else 1)
