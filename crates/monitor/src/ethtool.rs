//! Link speed and duplex from the driver (the ETHTOOL_GSET ioctl), for the
//! bond status (`Speed:`/`Duplex:` as in `/proc/net/bonding`). The ioctl
//! itself lives with every other system call, in `lagkit-dataplane`'s `sys`.

/// Speed in Mb/s and whether the link is full duplex, if the driver knows
/// (a link without carrier reports neither).
pub fn speed_duplex(name: &str) -> (Option<u32>, Option<bool>) {
    lagkit_dataplane::Link::open(name).map_or((None, None), |l| l.speed_duplex())
}
