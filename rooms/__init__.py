"""Classroom rooms, a service apart from the ML stack: join codes, teacher secrets, the stores (a SQLite
file on this machine by default, Redis for several machines, this process's memory for tests) and their
rules, summaries, and the :class:`~rooms.question.Question` record a round carries. Nothing here imports
torch or ``model``: questions are built from models in ``model.lessons.questions`` and reach a store as
plain JSON-able values."""
