# distutils: language = c++
def hello():
    return 1
