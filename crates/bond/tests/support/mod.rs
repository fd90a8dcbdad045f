//! Helpers shared by the bond's tests (and its failover example).

#![allow(dead_code)]

pub mod running;
