-- a breaking change: amounts lose two digits of precision, customer ids shrink to 16 bits
ALTER TABLE shop.orders
  MODIFY amount DECIMAL(10, 2) NOT NULL,
  MODIFY customer_id SMALLINT NOT NULL;
