"""Exercises: statements, answers computed by torch, checks that diagnose wrong answers, hints and solutions."""
