"""Records and state: the frozen data the core reasons about, its events, and the
protocols of the task and the model door. The bottom layer of the core.
"""
