//! The token list as the server holds it while serving: replaced whole when the
//! configuration is read again (SIGHUP), with the streams of a token that is gone ended.
//!
//! A request reads the list once, when it arrives ([`TokenTable::current`]); a stream
//! opened with a token also listens for replacements and ends with `UNAUTHENTICATED` as
//! soon as its token no longer gives the caller it was opened with ([`until_revoked`]).

use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};

use tokio::sync::watch;
use tokio_stream::Stream;
use tonic::Status;

use super::auth::{Caller, TokenConfig, Tokens};
use super::error::Refusal;

/// The current token list and a signal for each replacement.
pub struct TokenTable {
    current: RwLock<Arc<Tokens>>,
    replaced: watch::Sender<u64>,
}

/// What a replacement changed, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replaced {
    /// Tokens in the new list.
    pub tokens: usize,
    /// Tokens that are new or whose role or label changed.
    pub added: usize,
    /// Tokens of the old list that are gone or changed (their streams end).
    pub revoked: usize,
}

impl TokenTable {
    /// The table holding `tokens`.
    pub fn new(tokens: Tokens) -> TokenTable {
        TokenTable {
            current: RwLock::new(Arc::new(tokens)),
            replaced: watch::channel(0).0,
        }
    }

    /// The list as it stands.
    pub fn current(&self) -> Arc<Tokens> {
        match self.current.read() {
            Ok(t) => t.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Replaces the list. A list that would switch the server between open mode (no
    /// tokens: everyone is an arbiter) and tokens is refused and changes nothing: that is
    /// decided at start, with the address the server listens on.
    ///
    /// # Errors
    /// The switch, in words.
    pub fn replace(&self, list: &[TokenConfig]) -> Result<Replaced, String> {
        let new = Tokens::new(list);
        let old = self.current();
        if old.is_open() != new.is_open() {
            return Err(if new.is_open() {
                "the new configuration has no [[tokens]]: a server started with tokens does not \
                 turn open (everyone an arbiter) on a reload; restart it to do that"
                    .into()
            } else {
                "the server was started open (no tokens); restart it to start using tokens".into()
            });
        }
        let replaced = Replaced {
            tokens: new.count(),
            added: new.changed_from(&old),
            revoked: old.changed_from(&new),
        };
        match self.current.write() {
            Ok(mut t) => *t = Arc::new(new),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(new),
        }
        self.replaced.send_modify(|n| *n += 1);
        Ok(replaced)
    }

    /// Resolves once the token of `header` no longer gives `caller` (it was removed, or
    /// its role or label changed); never for a caller without a token (the public), nor
    /// for a token unknown when the stream opened (`caller` `None`: it was refused).
    pub fn revoked(
        self: &Arc<Self>,
        header: Option<String>,
        caller: Option<Caller>,
    ) -> impl Future<Output = ()> + Send + 'static + use<> {
        let table = self.clone();
        let mut replaced = self.replaced.subscribe();
        async move {
            if header.is_none() || caller.is_none() {
                return std::future::pending().await;
            }
            loop {
                if replaced.changed().await.is_err() {
                    return std::future::pending().await;
                }
                if table.current().caller(header.as_deref()).ok() != caller {
                    return;
                }
            }
        }
    }
}

/// `stream`, ended with `UNAUTHENTICATED` when `revoked` resolves.
pub fn until_revoked<S, T>(
    stream: S,
    revoked: impl Future<Output = ()> + Send + 'static,
) -> Revocable<S>
where
    S: Stream<Item = Result<T, Status>>,
{
    Revocable {
        stream,
        revoked: Box::pin(revoked),
        done: false,
    }
}

/// A stream that ends when its token is revoked ([`until_revoked`]).
pub struct Revocable<S> {
    stream: S,
    revoked: Pin<Box<dyn Future<Output = ()> + Send>>,
    done: bool,
}

impl<S, T> Stream for Revocable<S>
where
    S: Stream<Item = Result<T, Status>> + Unpin,
{
    type Item = Result<T, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        if self.revoked.as_mut().poll(cx).is_ready() {
            self.done = true;
            return Poll::Ready(Some(Err(Refusal::Unauthenticated(
                "token revoked: the server's token list was reloaded without it".into(),
            )
            .into())));
        }
        Pin::new(&mut self.stream).poll_next(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::auth::Role;
    use tokio_stream::StreamExt;

    fn token(token: &str, name: Option<&str>, role: Role) -> TokenConfig {
        TokenConfig {
            token: token.into(),
            name: name.map(str::to_string),
            role,
        }
    }

    #[tokio::test]
    async fn a_stream_ends_when_its_token_goes_and_others_stay() {
        let viewer = token("v", None, Role::Viewer);
        let arbiter = token("a", Some("Chief"), Role::Arbiter { event: None });
        let table = Arc::new(TokenTable::new(Tokens::new(&[
            viewer.clone(),
            arbiter.clone(),
        ])));
        let of = |t: &str| {
            let header = format!("Bearer {t}");
            let caller = table.current().caller(Some(&header)).expect("known");
            table.revoked(Some(header), Some(caller))
        };
        let (tx_a, rx_a) = tokio::sync::mpsc::unbounded_channel::<Result<u32, Status>>();
        let (tx_v, rx_v) = tokio::sync::mpsc::unbounded_channel::<Result<u32, Status>>();
        let mut a = until_revoked(
            tokio_stream::wrappers::UnboundedReceiverStream::new(rx_a),
            of("a"),
        );
        let mut v = until_revoked(
            tokio_stream::wrappers::UnboundedReceiverStream::new(rx_v),
            of("v"),
        );
        let (_tx_p, rx_p) = tokio::sync::mpsc::unbounded_channel::<Result<u32, Status>>();
        let mut public = until_revoked(
            tokio_stream::wrappers::UnboundedReceiverStream::new(rx_p),
            table.revoked(None, Some(Caller::of(Role::Viewer))),
        );
        tx_a.send(Ok(1)).expect("open");
        assert_eq!(a.next().await.map(|r| r.ok()), Some(Some(1)));
        // The arbiter's label changes and the viewer goes: both streams end.
        let r = table
            .replace(&[
                token("a", Some("Deputy"), Role::Arbiter { event: None }),
                token("n", None, Role::Viewer),
            ])
            .expect("replaced");
        assert_eq!(
            r,
            Replaced {
                tokens: 2,
                added: 2,
                revoked: 2
            }
        );
        tx_v.send(Ok(2)).expect("open");
        let end = a.next().await.expect("an end").expect_err("revoked");
        assert_eq!(end.code(), tonic::Code::Unauthenticated);
        assert!(a.next().await.is_none());
        assert!(v.next().await.expect("an end").is_err());
        // The public's stream does not end.
        let waited =
            tokio::time::timeout(std::time::Duration::from_millis(50), public.next()).await;
        assert!(waited.is_err(), "the public's stream stays open");
        // Same list again: nothing revoked.
        let same = table
            .replace(&[
                token("a", Some("Deputy"), Role::Arbiter { event: None }),
                token("n", None, Role::Viewer),
            ])
            .expect("replaced");
        assert_eq!((same.added, same.revoked), (0, 0));
    }

    #[test]
    fn open_mode_is_not_switched_by_a_reload() {
        let table = TokenTable::new(Tokens::new(&[token("v", None, Role::Viewer)]));
        assert!(table.replace(&[]).is_err());
        assert!(!table.current().is_open());
        let open = TokenTable::new(Tokens::new(&[]));
        assert!(open.replace(&[token("v", None, Role::Viewer)]).is_err());
        assert!(open.current().is_open());
    }
}
