//! Deferred actions between the brains and the game: the messages a
//! brain's launches and cancellations become and the outcomes the game
//! reports, and the entity each queued request goes to.

use std::marker::PhantomData;

use bevy_ecs::entity::{Entities, Entity, EntityIndex};
use bevy_ecs::message::Message;
use bt_core::{Action, ActionOp, ActionRequest, ItemIdx, Outcome, Ticket};

use crate::adapter::TreeMemory;

/// One launch or cancellation of a deferred action by an entity's brain.
///
/// Run the action, then report back with one message:
/// `outcomes.write(action.outcome(Outcome::Succeeded))`. A `Cancel` asks to
/// stop the action launched with the same ticket: the behavior was
/// deactivated (preempted, ended, or its entity despawned).
///
/// Two trees of one memory type that run side by side without a tag write
/// their messages as one type, `ActionMessage<M>`: the tree is the one of
/// the entity's brain (`brain.memory().tree()`), and `item` one of its
/// deciders.
pub struct ActionMessage<M> {
    /// The entity whose brain issued it.
    pub entity: Entity,
    /// The decider whose behavior issued it.
    pub item: ItemIdx,
    /// The launch it belongs to.
    pub ticket: Ticket,
    /// Launch (with the game's action code and argument) or cancel.
    pub op: ActionOp,
    _m: PhantomData<fn() -> M>,
}

impl<M: TreeMemory> ActionMessage<M> {
    pub(crate) fn new(entity: Entity, r: ActionRequest) -> Self {
        ActionMessage {
            entity,
            item: r.item,
            ticket: r.ticket,
            op: r.op,
            _m: PhantomData,
        }
    }

    /// The action, if this is a launch.
    pub fn launch(&self) -> Option<Action> {
        match self.op {
            ActionOp::Launch(a) => Some(a),
            ActionOp::Cancel => None,
        }
    }

    /// The message that reports this launch's `outcome`.
    pub fn outcome(&self, outcome: Outcome) -> ActionOutcome<M> {
        ActionOutcome {
            entity: self.entity,
            ticket: self.ticket,
            outcome,
            _m: PhantomData,
        }
    }
}

impl<M> Clone for ActionMessage<M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M> Copy for ActionMessage<M> {}

impl<M> std::fmt::Debug for ActionMessage<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionMessage")
            .field("entity", &self.entity)
            .field("item", &self.item)
            .field("ticket", &self.ticket)
            .field("op", &self.op)
            .finish()
    }
}

impl<M: TreeMemory> Message for ActionMessage<M> {}

/// A game system's report of a deferred action: handed to the entity's
/// brain before its next tick. Reports of cancelled launches, or of
/// entities that are gone, are ignored.
pub struct ActionOutcome<M> {
    /// The entity whose brain launched it.
    pub entity: Entity,
    /// The launch.
    pub ticket: Ticket,
    /// How it went.
    pub outcome: Outcome,
    _m: PhantomData<fn() -> M>,
}

impl<M> ActionOutcome<M> {
    /// The report of the launch `ticket` of `entity`'s brain: for a game
    /// that keeps the tickets of the actions it carries out (see also
    /// [`ActionMessage::outcome`]).
    pub fn new(entity: Entity, ticket: Ticket, outcome: Outcome) -> Self {
        ActionOutcome {
            entity,
            ticket,
            outcome,
            _m: PhantomData,
        }
    }
}

impl<M> Clone for ActionOutcome<M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M> Copy for ActionOutcome<M> {}

impl<M> std::fmt::Debug for ActionOutcome<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionOutcome")
            .field("entity", &self.entity)
            .field("ticket", &self.ticket)
            .field("outcome", &self.outcome)
            .finish()
    }
}

impl<M: TreeMemory> Message for ActionOutcome<M> {}

/// Where a queued request goes: the entity it belongs to, found among the
/// moved pending actions first, then by `local` (what the caller knows of
/// the agent id, such as a brain leaving or a load's own entities), then
/// as the entity whose index the agent id is. A cancellation ends its
/// action, so a moved ticket it names is forgotten.
#[inline]
pub(crate) fn route(
    moved: &mut Vec<(Ticket, Entity)>,
    entities: &Entities,
    request: &ActionRequest,
    local: impl FnOnce(u32) -> Option<Entity>,
) -> Entity {
    let entity = moved_entity(moved, request)
        .or_else(|| local(request.agent))
        .unwrap_or_else(|| resolve(entities, request.agent));
    if request.op == ActionOp::Cancel {
        forget_moved(moved, request.ticket);
    }
    entity
}

/// The entity of `request` when it is one of a moved pending action's.
#[inline]
fn moved_entity(moved: &[(Ticket, Entity)], request: &ActionRequest) -> Option<Entity> {
    if moved.is_empty() {
        return None;
    }
    moved
        .iter()
        .find(|(t, _)| *t == request.ticket)
        .map(|&(_, e)| e)
}

/// Forgets `ticket` among the moved pending actions: it was cancelled or
/// reported.
#[inline]
pub(crate) fn forget_moved(moved: &mut Vec<(Ticket, Entity)>, ticket: Ticket) {
    if !moved.is_empty() {
        moved.retain(|(t, _)| *t != ticket);
    }
}

/// The live entity with index `agent`.
pub(crate) fn resolve(entities: &Entities, agent: u32) -> Entity {
    match EntityIndex::from_raw_u32(agent) {
        Some(index) => entities.resolve_from_index(index),
        None => Entity::PLACEHOLDER,
    }
}
