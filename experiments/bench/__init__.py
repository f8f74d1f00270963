"""`meeplelab bench`: engine, agent, simulation and learning-stack speed."""
