//! A memory command carried out: each to the part of memory control it belongs to. A correction
//! is worded here and handed back, for the engine to store as any text to remember.

use super::chats::chats;
use super::context::Context;
use super::correct::{Correction, correct};
use super::forget::{self, ForgetAsk};
use super::memories;
use super::pause;
use crate::platform::api::{CommandOutput, MemoryCommand};

/// What a memory command did; or the correction it worded, to be stored before it is done.
pub enum Ran<'c> {
    Done(CommandOutput),
    Store(Correction<'c>),
}

pub fn run<'c>(cx: &mut Context, command: &'c MemoryCommand) -> Ran<'c> {
    let done = match command {
        MemoryCommand::Pause(ctx) => pause::pause(cx, ctx, true),
        MemoryCommand::Resume(ctx) => pause::pause(cx, ctx, false),
        MemoryCommand::Paused => pause::paused_report(cx),
        MemoryCommand::See {
            query,
            ctx,
            operator,
        } => memories::see(cx, query.as_deref(), ctx, *operator),
        MemoryCommand::Export {
            query,
            ctx,
            operator,
        } => memories::export(cx, query.as_deref(), ctx, *operator),
        MemoryCommand::Forget {
            query,
            ids,
            everything,
            earlier_groups,
            ctx,
            operator,
            at_once,
        } => forget::propose_forget(
            cx,
            &ForgetAsk {
                query: query.as_deref(),
                ids,
                everything: *everything,
                earlier_groups: *earlier_groups,
                ctx,
                operator: *operator,
                at_once: *at_once,
            },
        ),
        MemoryCommand::ConfirmForget(c) => {
            forget::confirm_forget(cx, &c.id, &c.ctx, c.operator, (&c.drop, &c.add))
        }
        MemoryCommand::EditForget(c) => {
            forget::edit_forget(cx, &c.id, &c.ctx, c.operator, (&c.drop, &c.add))
        }
        MemoryCommand::Chats => chats(cx),
        MemoryCommand::Correct { old, now_true, ctx } => match correct(cx, old, now_true, ctx) {
            Ok(correction) => return Ran::Store(correction),
            Err(refused) => refused,
        },
    };
    Ran::Done(done)
}
