import CMosquitto
import Forwarding
