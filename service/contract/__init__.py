"""The public contract: what clients and auditors see of Fairway (event and body shapes,
problem codes, receipts, the rules texts); every floor above builds on it, it on none of them."""
