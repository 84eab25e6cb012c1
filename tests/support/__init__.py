"""What the tests share: where the checkout's files are (:mod:`support.paths`), the ``abstat_cli``
fixture (:mod:`support.cli`), simulated boxes (``lab_sim``, ``local_ssh``, ``hostile_box``), a real
PostgreSQL server (``store_pg``), git repositories for bisect (``bisect_repos``) and the seeds' shapes."""
