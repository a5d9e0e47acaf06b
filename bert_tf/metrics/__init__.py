"""Evaluation metrics as the reference scripts compute them: GLUE and
multi-label classification (`classification`), conlleval's entity scores
(`entities`), the official SQuAD v1.1 / v2.0 scripts (`squad`) and CMRC
2018's (`cmrc2018`)."""
