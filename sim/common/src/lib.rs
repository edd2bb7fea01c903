//! What every simulator shares: its listener binds loopback only.
//!
//! A simulator answers with demo keys and invented data as if it were TYPO3, the Q&A API or
//! Mappy. Reachable from another machine it would be a stand-in anyone could take for the real
//! system, so its `listen` must be a loopback address; the check runs before anything is bound
//! or loaded, so a wrong address is the first thing the operator hears about.

use std::net::SocketAddr;

use tokio::net::TcpListener;

/// What a simulator's `listen` may be, as error messages say it.
pub const ALLOWED: &str = "127.0.0.0/8, ::1 or localhost, with a port (e.g. 127.0.0.1:0)";

/// Refuses a `listen` value that is not a loopback address with a port. A host name other than
/// `localhost` is refused even if it resolves to loopback today: what it resolves to can change.
pub fn check_loopback(listen: &str) -> Result<(), String> {
    let loopback = match listen.parse::<SocketAddr>() {
        Ok(addr) => addr.ip().is_loopback(),
        Err(_) => listen.rsplit_once(':').is_some_and(|(host, port)| {
            host.eq_ignore_ascii_case("localhost") && port.parse::<u16>().is_ok()
        }),
    };
    if loopback {
        Ok(())
    } else {
        Err(format!(
            "listen = {listen:?} is not a loopback address: a simulator listens only on {ALLOWED}"
        ))
    }
}

/// Checks `listen` ([`check_loopback`]) and binds it now, so that a port clash fails start-up
/// (port 0 picks a free one); returns the listener and the address it got.
pub async fn bind(listen: &str) -> Result<(TcpListener, SocketAddr), String> {
    check_loopback(listen)?;
    let listener = TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("no local address for {listen}: {e}"))?;
    Ok((listener, addr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_addresses_pass_and_others_are_refused() {
        for good in [
            "127.0.0.1:0",
            "127.1.2.3:8080",
            "[::1]:4101",
            "localhost:0",
            "LOCALHOST:9000",
        ] {
            assert_eq!(check_loopback(good), Ok(()), "{good}");
        }
        for bad in [
            "0.0.0.0:0",
            "[::]:0",
            "192.168.1.10:4101",
            "10.0.0.1:80",
            "[::ffff:127.0.0.1]:0",
            "example.com:80",
            "localhost.example.com:80",
            "localhost",
            "127.0.0.1",
            "",
        ] {
            let error = check_loopback(bad).unwrap_err();
            assert!(error.starts_with("listen = "), "{error}");
            assert!(error.contains(&format!("{bad:?}")), "{error}");
            assert!(error.contains(ALLOWED), "{error}");
        }
    }

    #[tokio::test]
    async fn bind_refuses_before_binding() {
        let error = bind("0.0.0.0:0").await.unwrap_err();
        assert!(error.contains("not a loopback address"), "{error}");
        let (_listener, addr) = bind("127.0.0.1:0").await.unwrap();
        assert!(addr.ip().is_loopback() && addr.port() != 0);
    }
}
