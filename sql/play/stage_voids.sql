-- An empty staging table for a page of Google Play's voided purchases (this session's, kept
-- between pages and emptied for each).
-- Reads:  nothing.
-- Writes: stage_play_voids (created when missing, emptied)
-- Values: none.
CREATE TEMP TABLE IF NOT EXISTS stage_play_voids (
    order_id text, voided_at timestamptz, purchase_token text, package_name text, purchased_at timestamptz,
    voided_quantity integer, voided_reason integer, voided_source integer
);

TRUNCATE stage_play_voids;
