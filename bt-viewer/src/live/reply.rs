//! A response's body: the whole of it at once, or a stream client's
//! events, one server-sent event per frame.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, ready};

use hyper::body::{Body, Buf, Bytes, Frame, SizeHint};

use super::rope::Rope;
use super::stream::{Item, Stream};

/// A response body: the whole of it at once, or a stream.
pub(super) enum Reply {
    Full(Option<Rope>),
    Stream(Stream),
}

impl Reply {
    pub(super) fn text(body: impl Into<Bytes>) -> Self {
        Reply::Full(Some(Rope::from(body.into())))
    }
}

impl Body for Reply {
    type Data = Rope;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Rope>, Infallible>>> {
        let stream = match self.get_mut() {
            Reply::Full(body) => return Poll::Ready(body.take().map(|b| Ok(Frame::data(b)))),
            Reply::Stream(stream) => stream,
        };
        loop {
            if let Some(recording) = &mut stream.recording {
                let event = ready!(recording.as_mut().poll(cx));
                stream.recording = None;
                // No recording: the server stopped.
                return Poll::Ready(event.map(|e| Ok(Frame::data(e))));
            }
            match ready!(stream.rx.poll_recv(cx)) {
                None => return Poll::Ready(None),
                Some(Item::Message(m)) => {
                    stream.pending.fetch_sub(m.len(), Ordering::Relaxed);
                    return Poll::Ready(Some(Ok(Frame::data(Rope::from(m)))));
                }
                Some(Item::Reply(m)) => return Poll::Ready(Some(Ok(Frame::data(Rope::from(m))))),
                Some(Item::Recording(build)) => stream.recording = Some(Box::pin(build.event())),
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Reply::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Reply::Full(body) => {
                SizeHint::with_exact(body.as_ref().map_or(0, |b| b.remaining() as u64))
            }
            Reply::Stream(_) => SizeHint::default(),
        }
    }
}
