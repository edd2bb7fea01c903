//! Who may use the console: signing in and out, and the two extractors every other handler
//! takes — [`SignedIn`] for a page, [`Posted`] for a form that acts (this origin only, with the
//! sign-in's CSRF token).

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{
    Form, FromRequest, FromRequestParts, OptionalFromRequestParts, Request, State,
};
use axum::response::{IntoResponse, Redirect, Response};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};

use super::console::{Console, now};
use super::pages::{self, respond};
use super::session::{self, COOKIE, Operator, Sessions};

/// A signed-in operator, for a page; without a sign-in the page is the sign-in form (`/ops`)
/// or a redirect to it.
pub struct SignedIn(pub Operator);

impl FromRequestParts<Arc<Console>> for SignedIn {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        console: &Arc<Console>,
    ) -> Result<Self, Response> {
        console
            .operator(&parts.headers)
            .map(SignedIn)
            .ok_or_else(|| Redirect::to("/ops").into_response())
    }
}

impl OptionalFromRequestParts<Arc<Console>> for SignedIn {
    type Rejection = Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        console: &Arc<Console>,
    ) -> Result<Option<Self>, Infallible> {
        Ok(console.operator(&parts.headers).map(SignedIn))
    }
}

/// A form that acts (`F`: its own fields), from a signed-in operator, sent from this origin with
/// their CSRF token.
pub struct Posted<F> {
    pub operator: Operator,
    pub form: F,
}

/// What every form that acts posts: the sign-in's CSRF token beside the form's own fields. Those
/// are read flattened, so each is text (a form's value is, and serde does not convert a flattened
/// one); a form of no fields of its own is [`serde::de::IgnoredAny`].
#[derive(Deserialize)]
struct Signed<F> {
    #[serde(default)]
    csrf: String,
    #[serde(flatten)]
    form: F,
}

impl<F> FromRequest<Arc<Console>> for Posted<F>
where
    F: DeserializeOwned + Send,
{
    type Rejection = Response;

    async fn from_request(request: Request, console: &Arc<Console>) -> Result<Self, Response> {
        let headers = request.headers().clone();
        let Form(Signed { csrf, form }) = Form::<Signed<F>>::from_request(request, console)
            .await
            .map_err(IntoResponse::into_response)?;
        let operator = console
            .permits(&headers, &csrf)
            .map_err(|refused| *refused)?;
        Ok(Self { operator, form })
    }
}

impl Console {
    /// A POST is acted on only from this origin, with the sign-in's CSRF token.
    fn permits(&self, headers: &HeaderMap, csrf: &str) -> Result<Operator, Box<Response>> {
        if !same_origin(headers) {
            return Err(Box::new(respond(
                StatusCode::FORBIDDEN,
                pages::login(Some("This form was sent from another site.")),
            )));
        }
        let Some(operator) = self.operator(headers) else {
            return Err(Box::new(Redirect::to("/ops").into_response()));
        };
        if !self.sessions.csrf_matches(&operator, csrf) {
            return Err(Box::new(respond(
                StatusCode::FORBIDDEN,
                pages::login(Some("The form expired; sign in again.")),
            )));
        }
        Ok(operator)
    }
}

/// The request's `Origin`, when a browser sent one, is this server's (the `Host` it was sent to).
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let origin_host = origin.split_once("://").map(|(_, h)| h).unwrap_or("");
    !host.is_empty() && origin_host.eq_ignore_ascii_case(host)
}

#[derive(Deserialize)]
pub(super) struct SignIn {
    #[serde(default)]
    token: String,
}

pub(super) async fn login(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Form(form): Form<SignIn>,
) -> Response {
    if !same_origin(&headers) {
        return respond(
            StatusCode::FORBIDDEN,
            pages::login(Some("This form was sent from another site.")),
        );
    }
    if !console.may_try() {
        return respond(
            StatusCode::TOO_MANY_REQUESTS,
            pages::login(Some("Too many wrong tokens; try again in a minute.")),
        );
    }
    if !Sessions::token_matches(&console.token, form.token.trim()) {
        console.failed();
        tracing::warn!("ops: a sign-in with a wrong token");
        return respond(
            StatusCode::UNAUTHORIZED,
            pages::login(Some("That is not the ops token.")),
        );
    }
    tracing::info!("ops: an operator signed in");
    let cookie = format!(
        "{COOKIE}={}; Path=/ops; HttpOnly; SameSite=Strict; Max-Age={}",
        console.sessions.open(now()),
        session::LIFETIME_SECONDS
    );
    let mut response = Redirect::to("/ops").into_response();
    if let Ok(cookie) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

pub(super) async fn logout(_: Posted<IgnoredAny>) -> Response {
    let mut response = Redirect::to("/ops").into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static("concierge_ops=; Path=/ops; HttpOnly; SameSite=Strict; Max-Age=0"),
    );
    response
}
