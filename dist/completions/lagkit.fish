# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_lagkit_global_optspecs
    string join \n h/help V/version
end

function __fish_lagkit_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_lagkit_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_lagkit_using_subcommand
    set -l cmd (__fish_lagkit_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c lagkit -n "__fish_lagkit_needs_command" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_needs_command" -s V -l version -d 'Print version'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "up" -d 'Run the bond(s) a configuration file describes, in the foreground'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "convert" -d 'Print lagkit\'s configuration of the bond(s) a host already has (netplan YAML, a systemd-networkd directory or .netdev/.network files, NetworkManager keyfiles, ifupdown interfaces, teamd JSON), with a comment for every setting it cannot carry'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "down" -d 'Give back what a bond (--name NAME) that is not running left changed (after a crash or SIGKILL): members\' MAC, MTU, ARP, IPv6 and filters, from its state file'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "status" -d 'Show a running bond (--name NAME, default every bond here) like /proc/net/bonding/bondX'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "stats" -d 'Show a running bond\'s (--name NAME, default every bond here) per-member counters and balance ratio, like AIX entstat -d'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "flow" -d 'Ask a running bond (--name NAME, default the only one here) which member carries a flow, and why'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "capture" -d 'Write the control frames (LACP, Marker, PAgP, ARP) a running bond (--name NAME) or switch (--switch NAME) sends and receives to a pcapng file, without stopping it'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "load" -d 'Built-in workloads without netperf (socketprocs, netperf-style stream/maerts/rr, LPM): a server and a client'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "lab" -d 'Labs: hosts, switches and shaped links in network namespaces'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "demo" -d 'IBM\'s AIX/Cisco 6513 address-vs-port hashing comparison (the short ibm-6513 sweep, two runs) in network namespaces, about 25 seconds'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "plan" -d 'Predict how a configuration spreads given traffic (a flow list or a capture), explain imbalance, rank the alternatives'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "check" -d 'Read both ends\' configurations (lagkit bond TOML, /proc/net/bonding, ifupdown, systemd-networkd, netplan, NetworkManager, teamd, AIX lsattr, Cisco IOS, Open vSwitch), captured LACPDUs or running bonds, and flag what does not match, before it costs throughput'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "switch" -d 'lagkit\'s own switch (Cisco IOS configuration, port-channels with LACP, PAgP or `on`), in the foreground; `switch show ...` and `switch test ...` ask a running one as a Catalyst would answer'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "top" -d 'A live view of the bonds and switches of network namespaces: each member\'s or port\'s rates, link, LACP/PAgP state and partner, drops, and the latest state changes, refreshed as you watch'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "sim" -d 'Simulate protocols in virtual time ("would my server and my switch form a channel?")'
complete -c lagkit -n "__fish_lagkit_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c lagkit -n "__fish_lagkit_using_subcommand up" -l fault-loss -d 'Lab and test use: drop this share of a member\'s frames, both directions (MEMBER=P, P from 0 to 1, e.g. e1=0.01; repeatable). This kernel has no netem: this is lagkit\'s own fault injection. A dropped GSO frame loses all its segments' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand up" -l engine -d 'The data path for every bond in the file, overriding its `engine`: `bpf` (the kernel moves frames through tc BPF programs), `userspace` (lagkit\'s forwarding threads and a TAP device) or `auto` (bpf where the kernel allows it)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand up" -l drop-unsupported -d 'Run a bond converted from another dialect even though some of its settings cannot be carried (`lagkit convert` lists them); without it, such a file is refused'
complete -c lagkit -n "__fish_lagkit_using_subcommand up" -l check -d 'Only check the configuration, print what would run, and exit'
complete -c lagkit -n "__fish_lagkit_using_subcommand up" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lagkit -n "__fish_lagkit_using_subcommand convert" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand down" -s n -l name -d 'The bond, as named in its configuration (e.g. bond0)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand down" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand status" -s n -l name -d 'The bond, as named in its configuration (e.g. bond0)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand status" -l format -d 'How to print: lagkit\'s own layout (`text`), the kernel\'s /proc/net/bonding/<bond> layout field for field (`proc`, status only), or `json`' -r -f -a "text\t'lagkit\'s own layout'
proc\t'The kernel\'s /proc/net/bonding/<bond> layout'
json\t'JSON'"
complete -c lagkit -n "__fish_lagkit_using_subcommand status" -l socket -d 'The control socket (default: derived from the bond name and this network namespace)' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand status" -l json -d 'Print JSON instead of text (the same as --format json)'
complete -c lagkit -n "__fish_lagkit_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lagkit -n "__fish_lagkit_using_subcommand stats" -s n -l name -d 'The bond, as named in its configuration (e.g. bond0)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand stats" -l format -d 'How to print: lagkit\'s own layout (`text`), the kernel\'s /proc/net/bonding/<bond> layout field for field (`proc`, status only), or `json`' -r -f -a "text\t'lagkit\'s own layout'
proc\t'The kernel\'s /proc/net/bonding/<bond> layout'
json\t'JSON'"
complete -c lagkit -n "__fish_lagkit_using_subcommand stats" -l socket -d 'The control socket (default: derived from the bond name and this network namespace)' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand stats" -l json -d 'Print JSON instead of text (the same as --format json)'
complete -c lagkit -n "__fish_lagkit_using_subcommand stats" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lagkit -n "__fish_lagkit_using_subcommand flow" -s n -l name -d 'The bond, as named in its configuration (e.g. bond0)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand flow" -l proto -d 'tcp or udp' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand flow" -l src -d 'Source IP:PORT' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand flow" -l dst -d 'Destination IP:PORT' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand flow" -l socket -d 'The control socket' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand flow" -l json -d 'Print JSON'
complete -c lagkit -n "__fish_lagkit_using_subcommand flow" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand capture" -s n -l name -d 'The bond, as named in its configuration (e.g. bond0)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand capture" -l switch -d 'Capture from a lagkit switch instead: its hostname, or the path of its control socket' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand capture" -s w -l write -d 'The pcapng file to write' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand capture" -l snaplen -d 'Bytes kept of each frame (14 to 65535)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand capture" -l duration -d 'Stop after this long (default: at Ctrl-C or SIGTERM)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand capture" -l socket -d 'The bond\'s control socket (default: derived from its name)' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand capture" -l data -d 'Data frames too: the switch copies the frames it forwards; for a bond, whose data frames the kernel or its forwarding threads move, this command reads them off the members itself (as tcpdump does), beside the control frames the bond copies'
complete -c lagkit -n "__fish_lagkit_using_subcommand capture" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and not __fish_seen_subcommand_from server client worker help" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and not __fish_seen_subcommand_from server client worker help" -f -a "server" -d 'Serve a workload until SIGTERM or Ctrl-C, then print what was served'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and not __fish_seen_subcommand_from server client worker help" -f -a "client" -d 'Run a workload against `lagkit load server` and print the result'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and not __fish_seen_subcommand_from server client worker help" -f -a "worker" -d 'One socketprocs worker process (started by server and client)'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and not __fish_seen_subcommand_from server client worker help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from server" -l kind -d 'socketprocs, stream, maerts, rr or lpm (stream, maerts and rr share one server)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from server" -l bind -d 'Address to listen on' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from server" -l port -d '(First) port: socketprocs listens on PORT..PORT+procs-1, lpm on PORT (control) and PORT+1 (data). Default: 7000, 12865 or 32791' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from server" -l procs -d 'socketprocs: server processes (N)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from server" -l method -d 'socketprocs: select (s), poll (p, level-triggered epoll) or epoll-et (e)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from server" -l lpm-ports -d 'lpm: fixed (one control and one data port) or sequential (a pair per migration)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from server" -l migrations -d 'lpm sequential: how many port pairs' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from server" -l fork -d 'socketprocs: fork workers instead of re-executing this program'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from server" -l json -d 'Print the final report as JSON'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from server" -l table -d 'Also print the table as the original measurements printed it'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from server" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l kind -d 'socketprocs, stream, maerts, rr or lpm' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l to -d 'The server\'s address' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l port -d 'The server\'s (first) port (default: 7000, 12865 or 32791 by kind)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l ports -d 'Explicit server ports, comma-separated (socketprocs: one per server process; lpm fixed: control,data)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l local -d 'Local address to send from' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l procs -d 'socketprocs: client processes (N; connects N×N)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l conns -d 'stream/maerts/rr: parallel connections' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l migrations -d 'lpm: parallel migrations (K)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l method -d 'socketprocs: select (s), poll (p, level-triggered epoll) or epoll-et (e)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l size -d 'Message (rr: request) size: 4096, 4K, 32K, 256K. Default by kind: 4K socketprocs, 32K stream/maerts, 1 rr, 64K lpm' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l reply -d 'rr: response size (default 1)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l duration -d 'How long to run: 10s, 500ms, 1m; a plain number is seconds (default 10s unless --messages is given)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l messages -d 'Stop after this many messages (transactions) per connection; lpm: data messages per migration' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l sockbuf -d 'SO_SNDBUF and SO_RCVBUF on both ends (netperf -s/-S), e.g. 128K' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l connect-timeout -d 'How long to retry a refused connection while the server starts (5s, 500ms; a plain number is seconds)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l lpm-base -d 'lpm: first client port; migration i uses base+2i (control) and base+2i+1 (data)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l lpm-ports -d 'lpm: the server\'s port layout, fixed or sequential' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l lpm-interval -d 'lpm: interval between control messages (100ms, 1s; a plain number is seconds)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l no-verify -d 'Do not check received bytes against the pattern'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l nodelay -d 'Set TCP_NODELAY on both ends (netperf -D)'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l fork -d 'socketprocs: fork workers instead of re-executing this program'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l json -d 'Print the report as JSON'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -l table -d 'Also print the table as the original measurements printed it (socketprocs row, netperf output, LPM pairs)'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from client" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from worker" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from help" -f -a "server" -d 'Serve a workload until SIGTERM or Ctrl-C, then print what was served'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from help" -f -a "client" -d 'Run a workload against `lagkit load server` and print the result'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from help" -f -a "worker" -d 'One socketprocs worker process (started by server and client)'
complete -c lagkit -n "__fish_lagkit_using_subcommand load; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and not __fish_seen_subcommand_from up down run list show demo help" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and not __fish_seen_subcommand_from up down run list show demo help" -f -a "up" -d 'Create the namespaces, links, switches and bonds a topology file describes, and leave them running (state in /run/lagkit/lab/)'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and not __fish_seen_subcommand_from up down run list show demo help" -f -a "down" -d 'Remove everything `lab up` made for this topology (idempotent; also after a crash)'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and not __fish_seen_subcommand_from up down run list show demo help" -f -a "run" -d 'Up, wait for the aggregates, run the workload, measure, report, down (a built-in scenario\'s name runs its whole sweep; see `lab list`)'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and not __fish_seen_subcommand_from up down run list show demo help" -f -a "list" -d 'List the built-in scenarios'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and not __fish_seen_subcommand_from up down run list show demo help" -f -a "show" -d 'Print a built-in scenario\'s topology files (one per configuration)'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and not __fish_seen_subcommand_from up down run list show demo help" -f -a "demo" -d 'IBM\'s AIX/Cisco 6513 LACP hashing comparison (the short ibm-6513 sweep, about 25 seconds; also `lagkit demo`)'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and not __fish_seen_subcommand_from up down run list show demo help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from up" -s q -l quiet -d 'No progress messages'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from up" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from down" -s q -l quiet -d 'No progress messages'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from down" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from run" -l switch -d 'Built-in scenario: its switches\' kind, lagkit (lagkit\'s own switch, the default) or ovs (Open vSwitch). A topology file says it per switch (`kind`)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from run" -l rate -d 'Built-in scenario: shape every link to RATE in bit/s (1g, 1gbit, 100M, 2.5g; a plain number is bit/s; 1g is the speed of IBM\'s AIX/Cisco measurements) instead of the scenario\'s scaled-down rate; reports say so in their scale line and flag runs the CPU or the switch held back' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from run" -l report -d 'Write report.html (tables, findings and charts in one page), report.txt, report.json and SVG charts into this folder' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from run" -l converge-timeout -d 'How long to wait for every bond and port-channel to form (60s, 1m, 1.5m; a plain number is seconds)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from run" -l short -d 'Built-in scenario: the short sweep (fewer, shorter runs)'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from run" -l json -d 'Print the report as JSON instead of the table'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from run" -s q -l quiet -d 'No progress messages'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from show" -l switch -d 'The switch the scenario\'s topologies use: lagkit (its own, the default) or ovs (Open vSwitch)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from show" -l short -d 'The short sweep\'s configurations'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from demo" -l report -d 'Where to write report.html, report.txt, report.json and the SVG charts' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from demo" -l switch -d 'The switch: lagkit (its own, the default) or ovs (Open vSwitch)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from demo" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "up" -d 'Create the namespaces, links, switches and bonds a topology file describes, and leave them running (state in /run/lagkit/lab/)'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "down" -d 'Remove everything `lab up` made for this topology (idempotent; also after a crash)'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "run" -d 'Up, wait for the aggregates, run the workload, measure, report, down (a built-in scenario\'s name runs its whole sweep; see `lab list`)'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the built-in scenarios'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print a built-in scenario\'s topology files (one per configuration)'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "demo" -d 'IBM\'s AIX/Cisco 6513 LACP hashing comparison (the short ibm-6513 sweep, about 25 seconds; also `lagkit demo`)'
complete -c lagkit -n "__fish_lagkit_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c lagkit -n "__fish_lagkit_using_subcommand demo" -l report -d 'Where to write report.html, report.txt, report.json and the SVG charts' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand demo" -l switch -d 'The switch: lagkit (its own, the default) or ovs (Open vSwitch)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand demo" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l lab -d 'Plan a lab instead: a built-in scenario (`lagkit lab list`) or a topology file; each configuration\'s workload becomes flows and its bonds and switch channels the ends' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l measured -d 'With --lab: a `lagkit lab run` report (report.json) of the same scenario or file; its runs\' recorded connections give the flows their ports, and predicted shares and goodput are printed beside the measured ones' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l host-hash -d 'The host bond\'s spreading, for flows it sends (`dir = out`): a transmit hash policy (layer3+4, src_dst_port, strong, ...) or a mode (balance-rr, active-backup, adaptive)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l config -d 'Take the host\'s mode, hash policy and link count from a lagkit bond configuration instead (its first bond, or --bond)' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l bond -d 'The bond in --config' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l switch-hash -d 'The switch\'s spreading, for flows towards the host (`dir = in`): a Cisco load-balance method (src-dst-ip, src-dst-port, ...) or any policy lagkit knows' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l switch-config -d 'The switch\'s IOS configuration (`show running-config`): a Catalyst whose `port-channel load-balance` method spreads what the host receives (the default lagkit\'s switch takes, src-dst-ip, without the line), whose channel\'s port count is the link count when it has one channel, and whose methods are the only ones ranked and suggested, as with --cisco-switch' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l links -d 'Links in the aggregate (default: the bond\'s members with --config, else 2)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l rate -d 'Each link\'s rate in bit/s: 1g, 1gbit, 100M, 2.5g (a plain number is bit/s)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l host -d 'For captures: the bonded host\'s IP or MAC; frames from it are `out`, to it `in`, others are skipped. Without it every frame is `out`' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l flow-format -d 'How to read a capture: `auto` (flow exports when every one of its first UDP datagrams goes to a collector port, 2055, 9995, 9996, 4739 or 6343, with a NetFlow v1, v5, v7 or v9, IPFIX or sFlow v5 version field; else the traffic itself), `packets` (the traffic itself), or `netflow` (v1, v5, v7, v9), `ipfix`, `sflow` (exports of that format on any port). Exported records are scaled by their sampling rate. Exports lagkit cannot read are named, and make the exit status 2' -r -f -a "auto\t''
packets\t''
netflow\t''
ipfix\t''
sflow\t''"
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l top -d 'How many alternatives to list' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l svg -d 'Write per-link share charts (plan-out.svg, plan-in.svg) into this directory' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l short -d 'With --lab: its short sweep\'s configurations'
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l cisco-switch -d 'The switch is a Cisco Catalyst: rank and suggest only the methods of its `port-channel load-balance` (src-mac, dst-mac, src-dst-mac, src-ip, dst-ip, src-dst-ip, src-port, dst-port, src-dst-port), each with the IOS line that sets it'
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l explain -d 'Name the causes of an imbalance and what to change'
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -l json -d 'Print JSON instead of the table'
complete -c lagkit -n "__fish_lagkit_using_subcommand plan" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lagkit -n "__fish_lagkit_using_subcommand check" -l lacpdus -d 'A capture (pcap or pcapng, from either end or the wire) whose LACPDUs tell what the ends actually say; may be repeated' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand check" -l channel -d 'The switch\'s channel group the host is cabled to (needed when the switch configuration has several)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand check" -l live -d 'Also ask the lagkit bonds running in this network namespace what their LACP partners say (partners, keys, rates, members left out)'
complete -c lagkit -n "__fish_lagkit_using_subcommand check" -l json -d 'Print JSON'
complete -c lagkit -n "__fish_lagkit_using_subcommand check" -l strict -d 'Refuse a Cisco IOS configuration with lines lagkit does not read (a misspelt command, say) instead of warning about them (exit status 2); well-known commands outside lagkit\'s subset (version, spanning-tree, description, ...) are still only counted'
complete -c lagkit -n "__fish_lagkit_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and not __fish_seen_subcommand_from show sh test down help" -l port -d 'A port: the interface as the configuration names it and the Linux device that carries it, e.g. Gi8/4=veth4 (repeatable; port order is the order given). The switch sets each device administratively up, or down for an interface configured shutdown' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and not __fish_seen_subcommand_from show sh test down help" -l socket -d 'The control socket (default: /run/lagkit/<netns>/switch/<hostname>.sock)' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and not __fish_seen_subcommand_from show sh test down help" -l metrics-listen -d 'Serve Prometheus metrics at ADDRESS:PORT of the switch\'s network namespace (127.0.0.1:9465, [::1]:9465, 0.0.0.0:9465), or at 127.0.0.1:PORT given a port alone (see docs/reference/metrics.md)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and not __fish_seen_subcommand_from show sh test down help" -l engine -d 'Who forwards data frames: `bpf` (a tc BPF program on every port\'s ingress: frames never leave the kernel), `userspace` (the daemon\'s loop over packet sockets), or `auto`: bpf where the kernel runs it and no port has storm control, else userspace. `show platform forwarding` names the engine and why' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and not __fish_seen_subcommand_from show sh test down help" -l check -d 'Only read the configuration, print what would run, and exit'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and not __fish_seen_subcommand_from show sh test down help" -l strict -d 'Refuse a configuration with lines lagkit does not read (a misspelt command, say) instead of warning about them; well-known commands outside lagkit\'s subset (version, spanning-tree, description, ...) are still only counted. The same rule as `lagkit check --strict`'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and not __fish_seen_subcommand_from show sh test down help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and not __fish_seen_subcommand_from show sh test down help" -a "show" -d 'Ask a running switch (--name NAME): `show etherchannel summary | etherchannel [N] detail | etherchannel load-balance[ing] | lacp neighbor [detail] | lacp sys-id | lacp counters | lacp internal | pagp neighbor | pagp counters | pagp internal | etherchannel protocol | etherchannel N port-channel | interfaces counters | interfaces status | mac address-table | running-config`, in IOS\'s layouts; words may be abbreviated as on a Catalyst (`sh eth sum`), and IOS\'s filters follow a `|` word: `"|" include RE`, `"|" exclude RE`, `"|" begin RE` (or `"|include" RE`)'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and not __fish_seen_subcommand_from show sh test down help" -a "sh" -d 'Ask a running switch (--name NAME): `show etherchannel summary | etherchannel [N] detail | etherchannel load-balance[ing] | lacp neighbor [detail] | lacp sys-id | lacp counters | lacp internal | pagp neighbor | pagp counters | pagp internal | etherchannel protocol | etherchannel N port-channel | interfaces counters | interfaces status | mac address-table | running-config`, in IOS\'s layouts; words may be abbreviated as on a Catalyst (`sh eth sum`), and IOS\'s filters follow a `|` word: `"|" include RE`, `"|" exclude RE`, `"|" begin RE` (or `"|include" RE`)'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and not __fish_seen_subcommand_from show sh test down help" -a "test" -d '`test etherchannel load-balance interface port-channel N ip|mac|port SRC DST`: which member a flow takes, and why'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and not __fish_seen_subcommand_from show sh test down help" -a "down" -d 'Clears what a killed switch left: the BPF engine\'s programs, which keep its ports forwarding with its last plan until a switch of the same name adopts them, their pins, its state file and control socket (default: every switch of this network namespace that left any and does not run)'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and not __fish_seen_subcommand_from show sh test down help" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from show" -s n -l name -d 'The switch (its hostname); default: the only one running in this network namespace' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from show" -l socket -d 'The control socket' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from show" -l json -d 'Print JSON instead of Cisco\'s text'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from sh" -s n -l name -d 'The switch (its hostname); default: the only one running in this network namespace' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from sh" -l socket -d 'The control socket' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from sh" -l json -d 'Print JSON instead of Cisco\'s text'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from sh" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from test" -s n -l name -d 'The switch (its hostname); default: the only one running in this network namespace' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from test" -l socket -d 'The control socket' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from test" -l json -d 'Print JSON instead of Cisco\'s text'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from test" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from down" -s n -l name -d 'The switch (its hostname)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from down" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from help" -f -a "show" -d 'Ask a running switch (--name NAME): `show etherchannel summary | etherchannel [N] detail | etherchannel load-balance[ing] | lacp neighbor [detail] | lacp sys-id | lacp counters | lacp internal | pagp neighbor | pagp counters | pagp internal | etherchannel protocol | etherchannel N port-channel | interfaces counters | interfaces status | mac address-table | running-config`, in IOS\'s layouts; words may be abbreviated as on a Catalyst (`sh eth sum`), and IOS\'s filters follow a `|` word: `"|" include RE`, `"|" exclude RE`, `"|" begin RE` (or `"|include" RE`)'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from help" -f -a "test" -d '`test etherchannel load-balance interface port-channel N ip|mac|port SRC DST`: which member a flow takes, and why'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from help" -f -a "down" -d 'Clears what a killed switch left: the BPF engine\'s programs, which keep its ports forwarding with its last plan until a switch of the same name adopts them, their pins, its state file and control socket (default: every switch of this network namespace that left any and does not run)'
complete -c lagkit -n "__fish_lagkit_using_subcommand switch; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c lagkit -n "__fish_lagkit_using_subcommand top" -l netns -d 'Watch the bonds and switches of this network namespace (as `ip netns` names it; repeat for more). Default: the current namespace' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand top" -l lab -d 'Watch every namespace of the lab NAME (`lagkit lab up`)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand top" -l interval -d 'Time between refreshes (e.g. 1s, 500ms)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand top" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and not __fish_seen_subcommand_from lacp pagp pair help" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and not __fish_seen_subcommand_from lacp pagp pair help" -f -a "lacp" -d 'Two LACP systems joined by N links, with faults at chosen times'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and not __fish_seen_subcommand_from lacp pagp pair help" -f -a "pagp" -d 'Two PAgP systems (or one facing a device without PAgP) joined by N links'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and not __fish_seen_subcommand_from lacp pagp pair help" -f -a "pair" -d 'Your bond\'s configuration against your switch\'s IOS configuration: would they form a channel, and which links carry it?'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and not __fish_seen_subcommand_from lacp pagp pair help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -l a -d 'Settings of system A (comma-separated, see below)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -l b -d 'Settings of system B' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -l links -d 'Number of links between A and B (default 2; `sim pair`: as many as the host has members and the channel has ports)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -l cut -d 'Cut link L (1-based) at time T: carrier down at both ends. Repeatable: --cut 2@30s' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -l restore -d 'Restore link L at time T' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -l blackhole -d 'From time T link L loses every frame while carrier stays up' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -l clear -d 'End a black hole on link L at time T' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -l drop -d 'Lose the next N PDUs A sends on link L at time T: --drop 1:2@20s' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -l loss -d 'Probability that any PDU is lost (0.0-1.0), on every link' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -l delay -d 'One-way link delay (100us, 1ms, 0.5ms; a plain number is seconds)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -l duration -d 'Virtual time to simulate: 60s, 1m, 90 (a plain number is seconds; default: 60s, or 30s past the last fault)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -l seed -d 'Seed of the loss process' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -l pcap -d 'Write every PDU sent to this pcap file (decode with tshark -O lacp / -O pagp)' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -l quiet -d 'Print only the final state, not the timeline'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from lacp" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -l a -d 'Settings of system A (comma-separated, see below)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -l b -d 'Settings of system B; `off` makes B a device that never speaks PAgP' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -l links -d 'Number of links between A and B (default 2; `sim pair`: as many as the host has members and the channel has ports)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -l cut -d 'Cut link L (1-based) at time T: carrier down at both ends. Repeatable: --cut 2@30s' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -l restore -d 'Restore link L at time T' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -l blackhole -d 'From time T link L loses every frame while carrier stays up' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -l clear -d 'End a black hole on link L at time T' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -l drop -d 'Lose the next N PDUs A sends on link L at time T: --drop 1:2@20s' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -l loss -d 'Probability that any PDU is lost (0.0-1.0), on every link' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -l delay -d 'One-way link delay (100us, 1ms, 0.5ms; a plain number is seconds)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -l duration -d 'Virtual time to simulate: 60s, 1m, 90 (a plain number is seconds; default: 60s, or 30s past the last fault)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -l seed -d 'Seed of the loss process' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -l pcap -d 'Write every PDU sent to this pcap file (decode with tshark -O lacp / -O pagp)' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -l quiet -d 'Print only the final state, not the timeline'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pagp" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l host -d 'The host bond\'s configuration (the TOML `lagkit up` reads)' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l bond -d 'The bond in --host, if the file has several' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l switch -d 'The switch\'s IOS configuration (as `lagkit switch` reads it)' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l channel -d 'The port-channel the host is cabled to, if the switch has several' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l links -d 'Number of links between A and B (default 2; `sim pair`: as many as the host has members and the channel has ports)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l cut -d 'Cut link L (1-based) at time T: carrier down at both ends. Repeatable: --cut 2@30s' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l restore -d 'Restore link L at time T' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l blackhole -d 'From time T link L loses every frame while carrier stays up' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l clear -d 'End a black hole on link L at time T' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l drop -d 'Lose the next N PDUs A sends on link L at time T: --drop 1:2@20s' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l loss -d 'Probability that any PDU is lost (0.0-1.0), on every link' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l delay -d 'One-way link delay (100us, 1ms, 0.5ms; a plain number is seconds)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l duration -d 'Virtual time to simulate: 60s, 1m, 90 (a plain number is seconds; default: 60s, or 30s past the last fault)' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l seed -d 'Seed of the loss process' -r
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l pcap -d 'Write every PDU sent to this pcap file (decode with tshark -O lacp / -O pagp)' -r -F
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -l quiet -d 'Print only the final state, not the timeline'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from pair" -s h -l help -d 'Print help'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from help" -f -a "lacp" -d 'Two LACP systems joined by N links, with faults at chosen times'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from help" -f -a "pagp" -d 'Two PAgP systems (or one facing a device without PAgP) joined by N links'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from help" -f -a "pair" -d 'Your bond\'s configuration against your switch\'s IOS configuration: would they form a channel, and which links carry it?'
complete -c lagkit -n "__fish_lagkit_using_subcommand sim; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "up" -d 'Run the bond(s) a configuration file describes, in the foreground'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "convert" -d 'Print lagkit\'s configuration of the bond(s) a host already has (netplan YAML, a systemd-networkd directory or .netdev/.network files, NetworkManager keyfiles, ifupdown interfaces, teamd JSON), with a comment for every setting it cannot carry'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "down" -d 'Give back what a bond (--name NAME) that is not running left changed (after a crash or SIGKILL): members\' MAC, MTU, ARP, IPv6 and filters, from its state file'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "status" -d 'Show a running bond (--name NAME, default every bond here) like /proc/net/bonding/bondX'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "stats" -d 'Show a running bond\'s (--name NAME, default every bond here) per-member counters and balance ratio, like AIX entstat -d'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "flow" -d 'Ask a running bond (--name NAME, default the only one here) which member carries a flow, and why'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "capture" -d 'Write the control frames (LACP, Marker, PAgP, ARP) a running bond (--name NAME) or switch (--switch NAME) sends and receives to a pcapng file, without stopping it'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "load" -d 'Built-in workloads without netperf (socketprocs, netperf-style stream/maerts/rr, LPM): a server and a client'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "lab" -d 'Labs: hosts, switches and shaped links in network namespaces'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "demo" -d 'IBM\'s AIX/Cisco 6513 address-vs-port hashing comparison (the short ibm-6513 sweep, two runs) in network namespaces, about 25 seconds'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "plan" -d 'Predict how a configuration spreads given traffic (a flow list or a capture), explain imbalance, rank the alternatives'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "check" -d 'Read both ends\' configurations (lagkit bond TOML, /proc/net/bonding, ifupdown, systemd-networkd, netplan, NetworkManager, teamd, AIX lsattr, Cisco IOS, Open vSwitch), captured LACPDUs or running bonds, and flag what does not match, before it costs throughput'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "switch" -d 'lagkit\'s own switch (Cisco IOS configuration, port-channels with LACP, PAgP or `on`), in the foreground; `switch show ...` and `switch test ...` ask a running one as a Catalyst would answer'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "top" -d 'A live view of the bonds and switches of network namespaces: each member\'s or port\'s rates, link, LACP/PAgP state and partner, drops, and the latest state changes, refreshed as you watch'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "sim" -d 'Simulate protocols in virtual time ("would my server and my switch form a channel?")'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and not __fish_seen_subcommand_from up convert down status stats flow capture load lab demo plan check switch top sim help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from load" -f -a "server" -d 'Serve a workload until SIGTERM or Ctrl-C, then print what was served'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from load" -f -a "client" -d 'Run a workload against `lagkit load server` and print the result'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from load" -f -a "worker" -d 'One socketprocs worker process (started by server and client)'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "up" -d 'Create the namespaces, links, switches and bonds a topology file describes, and leave them running (state in /run/lagkit/lab/)'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "down" -d 'Remove everything `lab up` made for this topology (idempotent; also after a crash)'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "run" -d 'Up, wait for the aggregates, run the workload, measure, report, down (a built-in scenario\'s name runs its whole sweep; see `lab list`)'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "list" -d 'List the built-in scenarios'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "show" -d 'Print a built-in scenario\'s topology files (one per configuration)'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "demo" -d 'IBM\'s AIX/Cisco 6513 LACP hashing comparison (the short ibm-6513 sweep, about 25 seconds; also `lagkit demo`)'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from switch" -f -a "show" -d 'Ask a running switch (--name NAME): `show etherchannel summary | etherchannel [N] detail | etherchannel load-balance[ing] | lacp neighbor [detail] | lacp sys-id | lacp counters | lacp internal | pagp neighbor | pagp counters | pagp internal | etherchannel protocol | etherchannel N port-channel | interfaces counters | interfaces status | mac address-table | running-config`, in IOS\'s layouts; words may be abbreviated as on a Catalyst (`sh eth sum`), and IOS\'s filters follow a `|` word: `"|" include RE`, `"|" exclude RE`, `"|" begin RE` (or `"|include" RE`)'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from switch" -f -a "test" -d '`test etherchannel load-balance interface port-channel N ip|mac|port SRC DST`: which member a flow takes, and why'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from switch" -f -a "down" -d 'Clears what a killed switch left: the BPF engine\'s programs, which keep its ports forwarding with its last plan until a switch of the same name adopts them, their pins, its state file and control socket (default: every switch of this network namespace that left any and does not run)'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from sim" -f -a "lacp" -d 'Two LACP systems joined by N links, with faults at chosen times'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from sim" -f -a "pagp" -d 'Two PAgP systems (or one facing a device without PAgP) joined by N links'
complete -c lagkit -n "__fish_lagkit_using_subcommand help; and __fish_seen_subcommand_from sim" -f -a "pair" -d 'Your bond\'s configuration against your switch\'s IOS configuration: would they form a channel, and which links carry it?'
