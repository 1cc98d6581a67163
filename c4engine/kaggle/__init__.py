"""A Kaggle ConnectX submission: ``c4engine connectx bundle`` packs the agent, the
package, its data and numba's compiled kernel into a ``submission.tar.gz`` whose
``main.py`` (:mod:`c4engine.kaggle.main`) Kaggle loads without c4engine installed."""
