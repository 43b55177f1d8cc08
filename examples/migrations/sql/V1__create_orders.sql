CREATE DATABASE shop;
USE shop;

CREATE TABLE orders (
  id          BIGINT NOT NULL AUTO_INCREMENT,
  customer_id INT NOT NULL,
  amount      DECIMAL(12, 2) NOT NULL,
  status      ENUM('new', 'paid', 'shipped') NOT NULL DEFAULT 'new',
  created_at  DATETIME(6) NOT NULL,
  PRIMARY KEY (id)
);
