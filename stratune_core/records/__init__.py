"""Records and state: the frozen data the core reasons about (skills, samples, scores, the state
Omega_t and its history H_t), its events, and the protocols of the task and the model door.
"""
