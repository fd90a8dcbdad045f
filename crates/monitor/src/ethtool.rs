//! Link speed and duplex from the driver (the ETHTOOL_GSET ioctl), for the
//! bond status (`Speed:`/`Duplex:` as in `/proc/net/bonding`).

/// `struct ethtool_cmd` of `<linux/ethtool.h>` (the legacy GSET layout,
/// which every driver still answers).
#[repr(C)]
#[derive(Default)]
struct EthtoolCmd {
    cmd: u32,
    supported: u32,
    advertising: u32,
    speed: u16,
    duplex: u8,
    port: u8,
    phy_address: u8,
    transceiver: u8,
    autoneg: u8,
    mdio_support: u8,
    maxtxpkt: u32,
    maxrxpkt: u32,
    speed_hi: u16,
    eth_tp_mdix: u8,
    eth_tp_mdix_ctrl: u8,
    lp_advertising: u32,
    reserved: [u32; 2],
}

const ETHTOOL_GSET: u32 = 1;
const SIOCETHTOOL: libc::c_ulong = 0x8946;

/// Speed in Mb/s and whether the link is full duplex, if the driver knows
/// (a link without carrier reports neither).
pub fn speed_duplex(name: &str) -> (Option<u32>, Option<bool>) {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() >= libc::IFNAMSIZ {
        return (None, None);
    }
    let mut cmd = EthtoolCmd {
        cmd: ETHTOOL_GSET,
        ..EthtoolCmd::default()
    };
    // SAFETY: plain socket(2); closed below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return (None, None);
    }
    // SAFETY: ifreq is plain data; zeroed is valid.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    ifr.ifr_ifru.ifru_data = (&mut cmd as *mut EthtoolCmd).cast();
    // SAFETY: SIOCETHTOOL with ETHTOOL_GSET writes an ethtool_cmd through
    // ifr_data, which points at `cmd` for the duration of the call.
    let r = unsafe { libc::ioctl(fd, SIOCETHTOOL as _, &mut ifr) };
    // SAFETY: fd came from socket() above.
    unsafe { libc::close(fd) };
    if r < 0 {
        return (None, None);
    }
    let speed = u32::from(cmd.speed) | (u32::from(cmd.speed_hi) << 16);
    let speed = (speed != 0 && speed != u32::MAX && speed != 0xffff).then_some(speed);
    let duplex = match cmd.duplex {
        0 => Some(false),
        1 => Some(true),
        _ => None,
    };
    (speed, duplex)
}
