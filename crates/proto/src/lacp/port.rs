//! Per-port variables of 802.1AX-2020 clause 6.4.7 and the record/update
//! functions of clause 6.4.9 that the machines call.

use super::churn::ChurnState;
use super::config::{Activity, PortConfig, Rate, SystemConfig};
use super::mux::MuxState;
use super::periodic::PeriodicState;
use super::receive::RxState;
use super::transmit::TxState;
use crate::Instant;
use lagkit_wire::{LacpduRepr, PortInfo, PortState, SystemId};

/// The Selected variable (6.4.8): the Selection Logic's verdict on a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Selected {
    /// No aggregator chosen yet, or the choice was withdrawn.
    Unselected,
    /// An aggregator is chosen and the port may attach to it.
    Selected,
    /// An aggregator is chosen but the port must wait (max_bundle, min_links).
    Standby,
}

impl Selected {
    /// Upper-case name as in the standard.
    pub fn name(self) -> &'static str {
        match self {
            Selected::Unselected => "UNSELECTED",
            Selected::Selected => "SELECTED",
            Selected::Standby => "STANDBY",
        }
    }
}

/// The timers of clause 6.4.8, as an index into a port's timer table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Timer {
    CurrentWhile,
    Periodic,
    WaitWhile,
    ActorChurn,
    PartnerChurn,
    /// Not a standard timer: when the Transmit machine's rate limit holds an
    /// LACPDU back, this is when it may go.
    TxHoldoff,
}

pub(crate) const TIMER_COUNT: usize = 6;

/// Per-port counters, in the spirit of the dot3adAggPortStats and Debug
/// tables of the 802.1AX MIB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortCounters {
    /// Valid LACPDUs received.
    pub lacpdu_rx: u64,
    /// LACPDUs sent.
    pub lacpdu_tx: u64,
    /// Slow-protocol frames that could not be used: malformed LACPDU or
    /// Marker PDU, or an unknown subtype (dot3adAggPortStatsIllegalRx +
    /// UnknownRx).
    pub bad_rx: u64,
    /// Of `bad_rx`, frames with a slow-protocols subtype other than LACP/Marker.
    pub unknown_rx: u64,
    /// Valid LACPDUs received while the port was disabled or LACP off.
    pub lacpdu_ignored: u64,
    /// Marker PDUs received.
    pub marker_rx: u64,
    /// Marker Response PDUs sent.
    pub marker_response_tx: u64,
    /// Marker Response PDUs received.
    pub marker_response_rx: u64,
    /// Entries into the Receive machine's EXPIRED state.
    pub expired: u64,
    /// Entries into the Receive machine's DEFAULTED state.
    pub defaulted: u64,
    /// Entries into ACTOR_CHURN.
    pub actor_churn: u64,
    /// Entries into PARTNER_CHURN.
    pub partner_churn: u64,
    /// Changes of the Selected variable.
    pub selection_changes: u64,
    /// LACPDUs the rate limit held back (sent later).
    pub tx_deferred: u64,
}

/// One aggregation port: its configuration and the standard's variables.
#[derive(Debug, Clone)]
pub(crate) struct Port {
    pub cfg: PortConfig,
    /// Actor_Oper_Port_Key.
    pub actor_oper_key: u16,
    /// Actor_Oper_Port_State.
    pub actor_state: PortState,
    /// Partner_Admin_* values (clause 6.4.7).
    pub partner_admin: PortInfo,
    /// Partner_Oper_* values.
    pub partner_oper: PortInfo,
    /// port_enabled: the MAC is operational (carrier).
    pub port_enabled: bool,
    /// port_moved.
    pub port_moved: bool,
    /// NTT: Need To Transmit.
    pub ntt: bool,
    /// Selected.
    pub selected: Selected,
    /// The aggregator index chosen by the Selection Logic (when not UNSELECTED).
    pub aggregator: Option<usize>,
    /// The aggregator the mux is attached to.
    pub attached: Option<usize>,
    /// actor_churn / partner_churn.
    pub actor_churn: bool,
    pub partner_churn: bool,
    /// Data-plane switches set by Enable_/Disable_Collecting/Distributing.
    pub collecting: bool,
    pub distributing: bool,
    pub rx: RxState,
    pub periodic: PeriodicState,
    pub mux: MuxState,
    pub tx: TxState,
    pub actor_churn_state: ChurnState,
    pub partner_churn_state: ChurnState,
    /// Deadlines indexed by [`Timer`].
    pub timers: [Option<Instant>; TIMER_COUNT],
    /// When the last three LACPDUs were sent (Transmit machine rate limit).
    pub tx_history: [Option<Instant>; 3],
    pub counters: PortCounters,
}

impl Port {
    pub fn new(cfg: PortConfig, sys: &SystemConfig) -> Port {
        let mut actor_state = PortState(0);
        actor_state.set(PortState::ACTIVITY, cfg.activity == Activity::Active);
        actor_state.set(PortState::TIMEOUT, cfg.rate == Rate::Fast);
        actor_state.set(PortState::AGGREGATION, cfg.aggregatable);
        // Partner_Admin_Port_State.LACP_Timeout follows the actor's own rate:
        // a port the operator set to fast keeps probing a silent or vanished
        // partner every Fast_Periodic_Time instead of every 30 s, so a repaired
        // link rejoins within a second.
        let admin_state = sys
            .no_partner
            .partner_admin_state()
            .with(PortState::TIMEOUT, cfg.rate == Rate::Fast);
        let partner_admin = PortInfo {
            system: SystemId::default(),
            key: 0,
            port_priority: 0,
            port: 0,
            state: admin_state,
        };
        Port {
            actor_oper_key: cfg.key,
            cfg,
            actor_state,
            partner_admin,
            partner_oper: partner_admin,
            port_enabled: false,
            port_moved: false,
            ntt: false,
            selected: Selected::Unselected,
            aggregator: None,
            attached: None,
            actor_churn: false,
            partner_churn: false,
            collecting: false,
            distributing: false,
            rx: RxState::Initialize,
            periodic: PeriodicState::NoPeriodic,
            mux: MuxState::Detached,
            tx: TxState::NoTransmit,
            actor_churn_state: ChurnState::Monitor,
            partner_churn_state: ChurnState::Monitor,
            timers: [None; TIMER_COUNT],
            tx_history: [None; 3],
            counters: PortCounters::default(),
        }
    }

    /// LACP_Enabled (6.4.8).
    pub fn lacp_enabled(&self) -> bool {
        self.cfg.lacp_enabled
    }

    pub fn start(&mut self, t: Timer, now: Instant, d: std::time::Duration) {
        self.timers[t as usize] = Some(now + d);
    }

    pub fn stop(&mut self, t: Timer) {
        self.timers[t as usize] = None;
    }

    /// The standard's "timer expired": running and its deadline has passed.
    pub fn expired(&self, t: Timer, now: Instant) -> bool {
        self.timers[t as usize].is_some_and(|d| d <= now)
    }

    /// The next deadline after `now`, if any.
    pub fn next_deadline(&self, now: Instant) -> Option<Instant> {
        self.timers
            .iter()
            .flatten()
            .copied()
            .filter(|&d| d > now)
            .min()
    }

    /// The actor's own parameters, as sent in the Actor Information TLV.
    pub fn actor_info(&self, system: SystemId) -> PortInfo {
        PortInfo {
            system,
            key: self.actor_oper_key,
            port_priority: self.cfg.port_priority,
            port: self.cfg.port_number,
            state: self.actor_state,
        }
    }

    /// recordPDU (6.4.9):
    /// > This function records the parameter values for the Actor carried in a
    /// > received LACPDU (Actor_Port_Number, Actor_Port_Priority, Actor_System,
    /// > Actor_System_Priority, Actor_Key, and Actor_State variables) as the
    /// > current Partner operational parameter values [...] and sets
    /// > Actor_Oper_Port_State.Defaulted to FALSE. It also sets
    /// > Partner_Oper_Port_State.Synchronization to TRUE if [the PDU's Partner
    /// > information matches the Actor's operational values and the PDU's
    /// > Actor_State.Synchronization is TRUE, or the PDU's Actor_State.Aggregation
    /// > is FALSE (Individual) and its Synchronization TRUE], and LACP will
    /// > actively run (the PDU's Actor_State.LACP_Activity is Active, or both the
    /// > Actor's and the PDU's Partner_State.LACP_Activity are Active).
    /// > Otherwise, Partner_Oper_Port_State.Synchronization is set to FALSE.
    pub fn record_pdu(&mut self, pdu: &LacpduRepr, system: SystemId) {
        let me = self.actor_info(system);
        let matches = pdu.partner.port == me.port
            && pdu.partner.port_priority == me.port_priority
            && pdu.partner.system == me.system
            && pdu.partner.key == me.key
            && pdu.partner.state.aggregatable() == me.state.aggregatable();
        let sync = ((matches && pdu.actor.state.in_sync())
            || (!pdu.actor.state.aggregatable() && pdu.actor.state.in_sync()))
            && (pdu.actor.state.active() || (me.state.active() && pdu.partner.state.active()));
        self.partner_oper = pdu.actor;
        self.partner_oper
            .state
            .set(PortState::SYNCHRONIZATION, sync);
        self.actor_state.set(PortState::DEFAULTED, false);
    }

    /// recordDefault (6.4.9):
    /// > Records the default parameter values for the Partner carried in the
    /// > Partner Admin parameters [...] as the current Partner operational
    /// > parameter values and sets Actor_Oper_Port_State.Defaulted to TRUE.
    pub fn record_default(&mut self) {
        self.partner_oper = self.partner_admin;
        self.actor_state.set(PortState::DEFAULTED, true);
    }

    /// The fields update_Selected and update_Default_Selected compare.
    fn same_partner(a: &PortInfo, b: &PortInfo) -> bool {
        a.port == b.port
            && a.port_priority == b.port_priority
            && a.system == b.system
            && a.key == b.key
            && a.state.aggregatable() == b.state.aggregatable()
    }

    /// update_Selected (6.4.9):
    /// > The parameter values for the Actor carried in the received PDU [...]
    /// > are compared with the corresponding operational parameter values for
    /// > the port's partner. If one or more of the comparisons show that the
    /// > value(s) received in the PDU differ from the current operational
    /// > values, then Selected is set to UNSELECTED. Otherwise, Selected
    /// > remains unchanged.
    ///
    /// Returns true if Selected was changed.
    pub fn update_selected(&mut self, pdu: &LacpduRepr) -> bool {
        if !Self::same_partner(&pdu.actor, &self.partner_oper) {
            return self.set_selected(Selected::Unselected);
        }
        false
    }

    /// update_Default_Selected (6.4.9): as update_Selected, comparing the
    /// Partner administrative values with the operational ones.
    pub fn update_default_selected(&mut self) -> bool {
        if !Self::same_partner(&self.partner_admin, &self.partner_oper) {
            return self.set_selected(Selected::Unselected);
        }
        false
    }

    /// update_NTT (6.4.9):
    /// > The parameter values for the Partner carried in the received PDU [...]
    /// > are compared with the corresponding operational parameter values for
    /// > the Actor [...]. If one or more of the comparisons show that the
    /// > value(s) received in the PDU differ from the current operational
    /// > values, then NTT is set to TRUE. Otherwise, NTT remains unchanged.
    pub fn update_ntt(&mut self, pdu: &LacpduRepr, system: SystemId) {
        let me = self.actor_info(system);
        const BITS: u8 = PortState::ACTIVITY
            | PortState::TIMEOUT
            | PortState::SYNCHRONIZATION
            | PortState::AGGREGATION;
        if pdu.partner.port != me.port
            || pdu.partner.port_priority != me.port_priority
            || pdu.partner.system != me.system
            || pdu.partner.key != me.key
            || pdu.partner.state.0 & BITS != me.state.0 & BITS
        {
            self.ntt = true;
        }
    }

    /// Sets Selected, counting real changes; returns true if it changed.
    pub fn set_selected(&mut self, s: Selected) -> bool {
        if self.selected == s {
            return false;
        }
        self.selected = s;
        self.counters.selection_changes += 1;
        true
    }

    /// True if the partner is known to be in sync with this port.
    pub fn partner_in_sync(&self) -> bool {
        self.partner_oper.state.in_sync()
    }

    /// True if the data path may send on this port.
    ///
    /// Not in the standard: coupled control (6.4.15) enables distributing
    /// together with collecting as soon as the partner is in sync, which
    /// is before the partner collects, so the first frames sent on a port
    /// that just joined can be dropped by the partner. Here a port in
    /// COLLECTING_DISTRIBUTING sends only once the partner's LACPDU says it
    /// collects (as independent control's DISTRIBUTING state waits for),
    /// or when there is no partner LACPDU to wait for (defaulted). The
    /// Actor.Distributing bit still follows the coupled machine.
    pub fn sends(&self) -> bool {
        self.distributing
            && (self.mux != MuxState::CollectingDistributing
                || self.partner_oper.state.collecting()
                || self.actor_state.defaulted())
    }
}

/// What the machines read besides their own port: time, the system's
/// identity and settings, and the Ready flag of the port's aggregator.
pub(crate) struct Ctx<'a> {
    pub now: Instant,
    pub system: SystemId,
    pub cfg: &'a SystemConfig,
    /// Ready (6.4.8) of the aggregator this port has selected.
    pub ready: bool,
    /// The port's aggregator has at least `min_links` ports attached with
    /// the partner in sync (always true without `min_links`).
    pub min_links_met: bool,
}
