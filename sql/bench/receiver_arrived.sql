-- Which of reconcile-bench receiver's refunds have their refunded_delivery item, and which of its
-- refund requests an answer Apple accepted.
-- Reads:  reconcile.review_items, reconcile.consumption_answers
-- Writes: nothing.
-- Values: :'refunded' (text[]: the refunded transactions), :'requested' (text[]: the transactions
--         Apple asked about).
SELECT transaction_id FROM reconcile.review_items
 WHERE kind = 'refunded_delivery' AND transaction_id = ANY (:'refunded'::text[])
UNION ALL
SELECT transaction_id FROM reconcile.consumption_answers
 WHERE status = 'answered' AND transaction_id = ANY (:'requested'::text[]);
