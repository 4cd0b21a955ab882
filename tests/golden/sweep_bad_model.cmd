sweep
tests/data/sweep_bad_model.json
