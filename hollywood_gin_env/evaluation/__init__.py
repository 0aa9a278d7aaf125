"""Evaluation: duplicate-deal matches in chunks (`duplicate`), the evaluator and its report (`evaluate`, the program
of `hollywood-gin evaluate`), its statistics (`stats`: Wilson intervals, Bradley-Terry ratings) and its chunks as Ray
tasks (`ray_tasks`)."""
