"""TF1-era input modules, written the way their authors wrote them, for compat-migrate's
tests: each is migrated, and the migrated functions are proven against TF1 by the harness."""
