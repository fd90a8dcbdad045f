//! Server and client in two network namespaces joined by a veth, as a lab
//! runs them: the caller enters the namespace, the workload only binds and
//! connects (and its worker processes inherit the namespace). Skips
//! without root.

use lagkit_dataplane::netns;
use lagkit_load::{run_client, start_server, ClientConfig, Kind, LpmPorts, Method, ServerConfig};
use lagkit_testnet::Lab;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

const SERVER: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 79, 0, 2));

#[test]
fn socketprocs_and_lpm_across_namespaces() {
    let Some(mut lab) = Lab::new("socketprocs_and_lpm_across_namespaces") else {
        return;
    };
    let a = lab.netns();
    let b = lab.netns();
    lab.veth(&a, "lda", &b, "ldb");
    lab.host(&a, "lda", "10.79.0.2/24");
    lab.host(&b, "ldb", "10.79.0.1/24");

    // socketprocs: 3 server processes in A, 3 client processes in B.
    let mut scfg = ServerConfig::new(Kind::Socketprocs);
    scfg.port = 7100;
    scfg.procs = 3;
    scfg.method = Method::EpollEt;
    let srv = netns::run_in(&a, || start_server(&scfg))
        .expect("enter A")
        .expect("server starts");
    let mut ccfg = ClientConfig::new(Kind::Socketprocs, SERVER);
    ccfg.port = 7100;
    ccfg.procs = 3;
    ccfg.method = Method::Poll;
    ccfg.duration = None;
    ccfg.messages = Some(100);
    let rep = netns::run_in(&b, || run_client(&ccfg))
        .expect("enter B")
        .expect("client runs");
    let srep = srv.stop().expect("server stops");
    assert_eq!(rep.errors, 0, "{}", rep.table());
    assert_eq!(rep.connections.len(), 9);
    assert_eq!(rep.transactions, 900);
    for c in &rep.connections {
        assert_eq!(c.local.ip(), IpAddr::V4(Ipv4Addr::new(10, 79, 0, 1)));
        assert_eq!(c.remote.ip(), SERVER);
        assert!((7100..7103).contains(&c.remote.port()));
    }
    assert_eq!(srep.connections.len(), 9);
    assert_eq!(srep.bytes_received, rep.bytes_sent);

    // LPM: seed 002's ports, sequential on both sides.
    let mut scfg = ServerConfig::new(Kind::Lpm);
    scfg.lpm_ports = LpmPorts::Sequential;
    scfg.migrations = 4;
    let srv = netns::run_in(&a, || start_server(&scfg))
        .expect("enter A")
        .expect("server starts");
    let mut ccfg = ClientConfig::new(Kind::Lpm, SERVER);
    ccfg.lpm_ports = LpmPorts::Sequential;
    ccfg.migrations = 4;
    ccfg.duration = Some(Duration::from_millis(300));
    let rep = netns::run_in(&b, || run_client(&ccfg))
        .expect("enter B")
        .expect("client runs");
    let srep = srv.stop().expect("server stops");
    assert_eq!(rep.errors, 0, "{}", rep.table());
    let pairs: Vec<(u16, u16, u16, u16)> = rep
        .migrations
        .iter()
        .map(|m| {
            (
                m.control_local.port(),
                m.control_remote.port(),
                m.data_local.port(),
                m.data_remote.port(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        vec![
            (32788, 32791, 32789, 32792),
            (32790, 32793, 32791, 32794),
            (32792, 32795, 32793, 32796),
            (32794, 32797, 32795, 32798),
        ]
    );
    let data: u64 = rep.migrations.iter().map(|m| m.data_bytes).sum();
    assert!(data > 0);
    let served: u64 = srep
        .connections
        .iter()
        .filter(|c| c.purpose == lagkit_load::Purpose::LpmData)
        .map(|c| c.bytes_received)
        .sum();
    assert_eq!(served, data);
    assert_eq!(srep.errors, 0, "{}", srep.table());
}
