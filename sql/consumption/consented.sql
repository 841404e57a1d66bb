-- Whether an account's consent to share consumption data with Apple holds now.
-- Reads:  :consent
-- Writes: nothing.
-- Values: :'user_id' (text).
SELECT 1 FROM :consent
 WHERE user_id = :'user_id'::text AND consented_at <= now() AND (withdrawn_at IS NULL OR withdrawn_at > now());
