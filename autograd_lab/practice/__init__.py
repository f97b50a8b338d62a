"""Exercises: statements, answers computed by torch, checks that diagnose wrong answers, hints and solutions.

(The room is called practice so that its name does not clash with the public function exercises().)"""
