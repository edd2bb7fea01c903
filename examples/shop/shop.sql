-- The demo's shop: a small online shop's orders, created by `[apps.shop] create_from` the first
-- time the demo runs (SQLite; the same statements load into PostgreSQL or MariaDB with
-- `placed_at` as TIMESTAMP or DATETIME). The demo token's client is `demo`.
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer VARCHAR(40) NOT NULL,
    status VARCHAR(20) NOT NULL,
    total DECIMAL(10,2) NOT NULL,
    placed_at TEXT NOT NULL
);
CREATE INDEX orders_by_customer ON orders (customer, placed_at);
INSERT INTO orders (id, customer, status, total, placed_at) VALUES
    (1001, 'demo', 'shipped', 42.90, '2026-11-02 09:14:00'),
    (1002, 'demo', 'paid', 18.50, '2026-11-20 16:40:00'),
    (1003, 'demo', 'open', 7.20, '2026-12-01 11:05:00'),
    (1004, 'demo', 'open', 64.00, '2026-12-03 19:22:00'),
    (1005, 'other', 'open', 12.00, '2026-12-04 08:00:00'),
    (1006, 'other', 'paid', 99.00, '2026-12-04 10:30:00');
