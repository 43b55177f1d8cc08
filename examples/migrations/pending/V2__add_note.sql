-- a compatible change: a new nullable column
ALTER TABLE shop.orders ADD COLUMN note VARCHAR(200) AFTER status;
