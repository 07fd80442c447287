-- The ledger's one script: a batch of admissions and settlements, the ones the gateway made in one
-- turn of its event loop, in the order it made them, each one atomic step (admit_one in
-- admit.lua, settle_one in settle.lua, loaded before this). One call a turn for both kinds, not
-- one each: the calls cost the gateway's one thread more than the steps (encoding, a write and a
-- read on the socket), and a user's ledger and window hashes are read and written once for both.
-- Each request says which step it is: 'a' (admission) or 's' (settlement); see each_request.

return each_request({ a = admit_one, s = settle_one })
