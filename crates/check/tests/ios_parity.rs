//! `lagkit check` and lagkit's switch read IOS through one reader: the
//! same snippets (good, misspelt, semantically wrong) are accepted or
//! refused by both, with the same line, and the same lines are warned
//! about. A check that accepted what the switch refuses (or the reverse)
//! would pass a configuration the switch then will not run.

use lagkit_check::facts::read_input;
use lagkit_switch::config::from_ios;

/// Accepted with these warned lines, or refused at this line.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Accepted { warned: Vec<usize> },
    Refused { line: usize },
}

fn by_check(text: &str) -> Verdict {
    match read_input("sw.ios", text) {
        Ok(i) => Verdict::Accepted {
            warned: i
                .unread
                .iter()
                .filter(|u| u.is_warning())
                .map(|u| u.line)
                .collect(),
        },
        Err(lagkit_check::facts::ReadError::Bad { line, .. }) => Verdict::Refused { line },
        Err(e) => panic!("not read as IOS: {e}\n{text}"),
    }
}

fn by_switch(text: &str) -> Verdict {
    // Every Ethernet interface the text names is one of the switch's
    // ports: only the text decides.
    let ports: Vec<(String, String)> = lagkit_ios::parse(text)
        .map(|c| {
            c.interfaces
                .iter()
                .filter(|i| i.port_channel().is_none())
                .enumerate()
                .map(|(k, i)| (i.name.clone(), format!("veth{k}")))
                .collect()
        })
        .unwrap_or_default();
    match from_ios(text, &ports) {
        Ok(c) => Verdict::Accepted {
            warned: c
                .unread
                .iter()
                .filter(|u| u.is_warning())
                .map(|u| u.line)
                .collect(),
        },
        Err(e) => Verdict::Refused { line: e.line },
    }
}

/// (snippet, what both must say).
fn corpus() -> Vec<(&'static str, Verdict)> {
    use Verdict::*;
    vec![
        // Good.
        (
            "interface range gi1/1 - 2\n channel-group 1 mode active\n lacp rate fast\ninterface po1\n mtu 1500\nport-channel load-balance src-dst-port\n",
            Accepted { warned: vec![] },
        ),
        (
            "hostname sw\n!\nversion 15.2\nspanning-tree mode rapid-pvst\ninterface Gi1/1\n description x\n channel-group 2 mode desirable non-silent\n!\ninterface Vlan1\n ip address 10.0.0.1 255.255.255.0\n",
            Accepted { warned: vec![] },
        ),
        (
            "port-channel hash-distribution adaptive\ninterface gi1/1\n switchport mode trunk\n switchport trunk allowed vlan 1-10,20\n",
            Accepted { warned: vec![] },
        ),
        (
            "lacp system-priority 100\nport-channel auto\ninterface gi1/1\n channel-group 1 mode passive\n speed\n",
            Accepted { warned: vec![5] },
        ),
        // Misspelt: accepted, the lines warned.
        (
            "interface GigabitEthernet1/0/1\n switchport mode access\n chanel-group 1 mode active\n lacp rat fast\n",
            Accepted { warned: vec![3, 4] },
        ),
        (
            "interface gi1/1\n switchport mode acess\n spaning-tree portfast\n no shutdwn\n",
            Accepted { warned: vec![2, 3, 4] },
        ),
        (
            "interfase gi1/1\ninterface gi1/2\n channel-group 1 mode on\n",
            Accepted { warned: vec![1] },
        ),
        // Refused by both, at the same line.
        ("interface gi1/1\nport-channel load-balance src-dst-prt\n", Refused { line: 2 }),
        ("interface gi1/1\n channel-group 1 mode activ\n", Refused { line: 2 }),
        (
            "interface gi1/1\n channel-group 1 mode active\ninterface gi1/2\n channel-group 1 mode on\n",
            Refused { line: 4 },
        ),
        (
            "interface range gi1/1 - 2\n channel-group 4 mode on\ninterface po4\n port-channel min-links 2\n",
            Refused { line: 4 },
        ),
        ("interface gi1/1\n mtu 99999\n", Refused { line: 2 }),
        ("interface gi1/1\n switchport trunk allowed vlan 20-10\n", Refused { line: 2 }),
        ("interface gi1/1\n switchport access vlan 5000\n", Refused { line: 2 }),
        ("interface gi1/1\n!\nip routing\nmtu 9000\n", Refused { line: 4 }),
        ("interface gi8/5 - 4\n", Refused { line: 1 }),
        ("interface range gi8/5 - 4\n", Refused { line: 1 }),
        ("interface Frob1\n", Refused { line: 1 }),
        (
            "interface gi1/1\n channel-group 1 mode passive non-silent\n",
            Refused { line: 2 },
        ),
        ("interface gi1/1\n lacp rate sometimes\n", Refused { line: 2 }),
    ]
}

#[test]
fn check_and_switch_accept_and_refuse_the_same_ios() {
    for (text, want) in corpus() {
        let (c, s) = (by_check(text), by_switch(text));
        assert_eq!(c, s, "check and switch differ on:\n{text}");
        assert_eq!(c, want, "{text}");
    }
}

#[test]
fn strict_refuses_the_same_lines_for_both() {
    for (text, want) in corpus() {
        let Verdict::Accepted { warned } = want else {
            continue;
        };
        let strict: Vec<usize> = lagkit_ios::parse(text)
            .unwrap()
            .strict_errors()
            .iter()
            .map(|e| e.line)
            .collect();
        assert_eq!(strict, warned, "{text}");
    }
}
