-- When a refresh token was rotated: a client whose answer was lost (a dropped connection, a
-- restart) may present it again for a short while without its family being revoked.
ALTER TABLE oauth_refresh ADD COLUMN used_at BIGINT;
