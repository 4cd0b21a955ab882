validate
vtrain-planner
