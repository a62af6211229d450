//! The one pub/sub connection of a [`Redis`](crate::Redis) family: subscribed to `<prefix>:changes`,
//! `<prefix>:wake` and `<prefix>:replies`, fanned out to the local listeners ([`Events`]), pinged at every heartbeat so
//! that a Redis that stops answering (paused, partitioned away) is noticed within one beat plus the
//! response timeout, and made again with exponential backoff whenever it drops.
//!
//! Each subscription keeps the last number heard from each publisher (`sequence.rs`): a number
//! skipped, or a publisher saying it lost one, ends every local feed and watch. What was heard is
//! forgotten when the subscription is made again (everything local ended then anyway).

use std::sync::Arc;
use std::time::Duration;

use futures_util::{FutureExt, StreamExt};

use crate::events::Events;
use crate::keys::Keys;
use crate::link::{Fault, Link, Settings};
use crate::replies::Notice;
use crate::sequence::{Body, Heard, decode};

/// Why a subscription ended.
enum Ended {
    /// The connection failed or stopped answering: the command connection is replaced too.
    Lost(String),
    /// This instance asked for a new subscription (a publication failed).
    Asked,
}

/// Keeps the subscription up for as long as the family lives.
pub(crate) async fn subscribe_forever(
    settings: Arc<Settings>,
    events: Arc<Events>,
    link: Arc<Link>,
    keys: Keys,
    beat: Duration,
    own: String,
) {
    let channels = [keys.changes(), keys.wake(), keys.replies()];
    let mut delay = settings.backoff.0;
    let mut failures = 0u64;
    loop {
        settings.count();
        let opened = settings
            .attempt(async {
                let mut pubsub = settings.client.get_async_pubsub().await?;
                pubsub.subscribe(&channels).await?;
                Ok(pubsub)
            })
            .await;
        match opened {
            Ok(pubsub) => {
                if failures > 0 {
                    tracing::info!(after = failures, "the Redis subscription is up again");
                }
                failures = 0;
                delay = settings.backoff.0;
                // A request for a new subscription made before this one was up is answered by it.
                let _ = events.resubscribe.notified().now_or_never();
                events.set_up();
                let heard = Heard::new(&own, beat);
                match serve(pubsub, &settings, &events, &keys, beat, heard).await {
                    Ended::Lost(reason) => {
                        events.set_down(&reason);
                        link.broken(None, &reason);
                    }
                    Ended::Asked => events.set_down("a publication of this instance could not be sent"),
                }
                tokio::time::sleep(delay).await;
                continue;
            }
            Err(reason) => {
                failures += 1;
                if failures == 1 {
                    tracing::warn!(reason, "cannot subscribe to Redis; retrying with backoff");
                } else {
                    tracing::debug!(reason, failures, "cannot subscribe to Redis yet");
                }
                events.set_down(&reason);
            }
        }
        tokio::time::sleep(delay).await;
        delay = settings.next_delay(delay);
    }
}

/// Delivers what the subscription receives until it ends.
async fn serve(
    pubsub: redis::aio::PubSub,
    settings: &Settings,
    events: &Events,
    keys: &Keys,
    beat: Duration,
    mut heard: Heard,
) -> Ended {
    let (mut sink, mut stream) = pubsub.split();
    let changes = keys.changes();
    let wake = keys.wake();
    let replies = keys.replies();
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + beat, beat);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            message = stream.next() => {
                let Some(message) = message else {
                    return Ended::Lost("the subscription connection closed".into());
                };
                let channel = message.get_channel_name();
                if channel == replies {
                    // Published by the script that took the answer or ended the session: not numbered,
                    // lost only with the subscription, which ends every wait then.
                    match Notice::decode(message.get_payload_bytes()) {
                        Ok(Notice::Reply { session, id, message }) => {
                            events.deliver_reply(&session, &id, message);
                        }
                        Ok(Notice::Ended(session)) => events.end_session(&session),
                        Err(error) => tracing::warn!(error, channel, "a message on the Redis channel does not parse; ignored"),
                    }
                    continue;
                }
                let is_change = channel == changes;
                if !is_change && channel != wake {
                    continue;
                }
                let envelope = match decode(message.get_payload_bytes(), is_change) {
                    Ok(envelope) => envelope,
                    Err(error) => {
                        tracing::warn!(error, channel, "a message on the Redis channel does not parse; ignored");
                        continue;
                    }
                };
                if let Some(reason) = heard.hear(&envelope, std::time::Instant::now()) {
                    events.interrupt(&reason);
                }
                match envelope.body {
                    Body::Change(change) => events.deliver_change(&change),
                    Body::Wake(id) => events.deliver_wake(&id),
                    Body::Beat => {}
                }
            }
            _ = ticks.tick() => {
                heard.sweep(std::time::Instant::now());
                settings.count();
                match tokio::time::timeout(settings.response_timeout, sink.ping::<redis::Value>()).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(error)) => return Ended::Lost(Fault::of(&error, &settings.redactor).text),
                    Err(_) => {
                        return Ended::Lost(format!(
                            "the subscription's ping had no answer within the response timeout ({:?})",
                            settings.response_timeout
                        ));
                    }
                }
            }
            () = events.resubscribe.notified() => return Ended::Asked,
        }
    }
}
