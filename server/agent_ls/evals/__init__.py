"""``agent-ls eval SUITE``: run a suite of tasks through the agent and score them (docs/evals.md).

``suite`` reads a suite folder, ``attempt`` runs one attempt of a task in a temporary copy of its
``repo/`` (the ``agent-ls run`` path: ``assembly.assemble_session`` and ``Session.run``) and runs its
``check`` there, ``report`` turns attempts into pass@1, pass@k and the rest (a table and JSON) and
compares two runs, ``command`` ties them together with a bound on the attempts run at once, and
``ray_dispatch`` runs the attempts as Ray tasks instead (``--ray``, the optional extra).
A front end, beside ``headless``: it imports neither pygls nor an HTTP client itself.
"""
