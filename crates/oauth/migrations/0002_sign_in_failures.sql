-- Failed sign-ins per peer address and per account, counted for the whole deployment, so
-- guesses spread over several instances wait as long as guesses at one.
CREATE TABLE oauth_sign_in_failure (
    key TEXT PRIMARY KEY,
    failures INTEGER NOT NULL,
    last_at TIMESTAMPTZ NOT NULL
);
